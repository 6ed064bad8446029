CREATE TABLE t(x); SELECT sum(nosuch) OVER () FROM t;
