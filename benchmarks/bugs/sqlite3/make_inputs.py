"""Make SQLite's seeds and the crafted inputs of its bugs (benchmarks/bugs/sqlite3/{seeds,inputs}):
SQL scripts, as test/ossfuzz.c takes them (no selector byte: its default).

    python benchmarks/bugs/sqlite3/make_inputs.py     # rewrites seeds/ and inputs/
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402


def sql(scripts: dict[str, str]) -> dict[str, bytes]:
    """The files of SQL scripts: each a line."""
    return {name: (text + "\n").encode() for name, text in scripts.items()}


def aggregates(n: int, per_column: int = 10) -> str:
    """A query with ``n`` distinct aggregate functions, ``per_column`` summed in each result column
    (shallow expressions, fewer result columns than SQLITE_LIMIT_COLUMN)."""
    cols = []
    for c in range(0, n, per_column):
        cols.append("+".join(f"sum(a+{k})" for k in range(c, min(n, c + per_column))))
    return f"CREATE TABLE t(a); SELECT {', '.join(cols)} FROM t;"


SEEK_SCAN = ("CREATE TABLE t1(x INTEGER PRIMARY KEY, y); CREATE UNIQUE INDEX t1y ON t1(y);"
             " INSERT INTO t1 VALUES(1,'a'),(2,'b'),(3,'c'); CREATE TABLE t2(z); INSERT INTO t2 VALUES('b'),('a');"
             " ANALYZE sqlite_schema; INSERT INTO sqlite_stat1 VALUES('t1','t1y','50 1'); ANALYZE sqlite_schema;")


FTS5_DOCS = ("CREATE VIRTUAL TABLE doc USING fts5(txt);"
             " INSERT INTO doc(txt) VALUES('alpha beta'),('beta gamma'),('delta');")

SEEK_SCAN_RANGE = ("CREATE TABLE m(a, b, c); CREATE INDEX m_abc ON m(a, b, c);"
                   " INSERT INTO m VALUES(1,2,3),(1,2,5),(1,3,6),(1,3,12),(2,2,5);")

CONST_JOIN = ("CREATE TABLE cp(v, w TEXT); CREATE TABLE one(z);"
              " INSERT INTO one VALUES(1); INSERT INTO cp VALUES(7.0,'x');")

TRANSITIVE = ("CREATE TABLE h(ha INT, hb INT); CREATE INDEX h_hb ON h(hb); CREATE TABLE g(gk INT, gv);"
              " INSERT INTO h VALUES(0,4); INSERT INTO g VALUES(4,'four');")


def main() -> None:
    seeds = {
        "basic.sql": "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL); INSERT INTO t VALUES(1,'x',1.5),(2,'y',NULL);"
                     " SELECT a, upper(b), c*2 FROM t WHERE b LIKE 'x%' ORDER BY a DESC;",
        "index.sql": "CREATE TABLE t(a, b); CREATE INDEX ti ON t(a, b); INSERT INTO t VALUES(1,2),(3,4);"
                     " SELECT * FROM t WHERE a IN (1,3) AND b > 1; ANALYZE; SELECT * FROM sqlite_stat1;",
        "join.sql": "CREATE TABLE p(id INTEGER PRIMARY KEY, n); CREATE TABLE q(pid, v);"
                    " INSERT INTO p VALUES(1,'a'),(2,'b'); INSERT INTO q VALUES(1,10),(1,20),(2,5);"
                    " SELECT n, count(*), sum(v), group_concat(v) FROM p LEFT JOIN q ON pid=id GROUP BY n HAVING sum(v)>1;",
        "window.sql": "CREATE TABLE t(x); INSERT INTO t VALUES(1),(2),(3);"
                      " SELECT x, sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"
                      " WINDOW w AS (PARTITION BY x % 2);",
        "cte.sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<20)"
                   " SELECT i, i*i FROM c WHERE i % 3 = 0;",
        "fts5.sql": "CREATE VIRTUAL TABLE f USING fts5(body, detail='none'); INSERT INTO f(rowid, body)"
                    " VALUES(1,'one two'),(5,'two three'); SELECT rowid FROM f('two');",
        "like.sql": "SELECT 'abc' LIKE 'a%', 'abc' LIKE 'a_c' ESCAPE 'x', 'a%c' LIKE 'a\\%c' ESCAPE '\\';",
        # seeds for the areas of SQL007-SQL013 that the ones above do not reach (each a few
        # changes away from its bug: no seed triggers a canary)
        "trim.sql": "SELECT trim('  pad  '), ltrim('xxkeepxx', 'x'), rtrim('tail;;', ';'), trim('[v]', '[]');",
        "fkey.sql": "CREATE TABLE owner(id INTEGER PRIMARY KEY, name); CREATE TABLE pet(oid REFERENCES owner, kind);"
                    " INSERT INTO owner VALUES(1,'ann'); INSERT INTO pet VALUES(1,'cat'),(NULL,'dog');"
                    " PRAGMA foreign_key_check; PRAGMA foreign_key_list(pet);",
        "distinct.sql": "CREATE TABLE item(sku, shelf); CREATE UNIQUE INDEX item_sku ON item(sku);"
                        " INSERT INTO item VALUES(1,'a'),(2,'a'),(3,'b'); SELECT DISTINCT shelf FROM item;"
                        " SELECT DISTINCT sku FROM item WHERE shelf='a';",
        "rowid.sql": "CREATE TABLE ev(id INTEGER PRIMARY KEY, at); INSERT INTO ev VALUES(1,10),(2,20),(7,70);"
                     " CREATE TABLE unit(u); INSERT INTO unit VALUES(1);"
                     " SELECT id FROM ev WHERE id > 1.5 AND id <= 6.5; SELECT at FROM ev, unit WHERE at=20 AND at<=id*10*u;",
        "scan.sql": "CREATE TABLE m(a, b, c); CREATE INDEX m_abc ON m(a, b, c);"
                    " INSERT INTO m VALUES(1,2,3),(1,2,8),(1,3,5),(2,2,4);"
                    " SELECT c FROM m WHERE a=1 AND b IN (2,3) AND c>4; SELECT * FROM m WHERE a=1 AND b=2 AND c BETWEEN 2 AND 5;",
    }
    inputs = {
        # SQL001: an index range scan in a join's inner loop (reach) / IN on the rowid with stat1 rows
        # that make the planner seek-scan the inner loop (trigger)
        "SQL001.reach": SEEK_SCAN + " SELECT t1.x FROM t2 CROSS JOIN t1 WHERE t2.z = t1.y;",
        "SQL001.trigger": SEEK_SCAN + " SELECT t1.x FROM t2 CROSS JOIN t1 WHERE t2.z = t1.y AND t1.x IN (1, 2);",
        # SQL002: several wildcards after '%' (reach) / ESCAPE '_' and a pattern ending in '%' (trigger)
        "SQL002.reach": "SELECT 'abc' LIKE 'a%%c';",
        "SQL002.trigger": "SELECT 'xyz' LIKE 'x%' ESCAPE '_';",
        # SQL003: an aggregate query (reach) / 2010 distinct aggregate functions (trigger)
        "SQL003.reach": aggregates(20),
        "SQL003.trigger": aggregates(2010),
        # SQL004: a window aggregate (reach) / one whose argument names no column (trigger)
        "SQL004.reach": "CREATE TABLE t(x); SELECT sum(x) OVER () FROM t;",
        "SQL004.trigger": "CREATE TABLE t(x); SELECT sum(nosuch) OVER () FROM t;",
        # SQL005: a detail=none FTS5 doclist stepped through (reach) / with rowids -2 and the
        # maximum in one segment: their delta exceeds INT64_MAX and wraps (trigger)
        "SQL005.reach": "CREATE VIRTUAL TABLE f USING fts5(b, detail='none'); BEGIN;"
                        " INSERT INTO f(rowid, b) VALUES(3, 'red fox'); INSERT INTO f(rowid, b) VALUES(8, 'red fox');"
                        " COMMIT; SELECT rowid FROM f('red AND fox');",
        "SQL005.trigger": "CREATE VIRTUAL TABLE f USING fts5(b, detail='none'); BEGIN;"
                          " INSERT INTO f(rowid, b) VALUES(-2, 'red fox');"
                          " INSERT INTO f(rowid, b) VALUES(9223372036854775807, 'red fox');"
                          " COMMIT; SELECT rowid FROM f('red AND fox');",
        # SQL006: an FTS5 query that reads its segment's leaves (reach) / after the leaves in the
        # %_data shadow table were overwritten with records whose szLeaf header is 1 (trigger)
        "SQL006.reach": FTS5_DOCS + " SELECT rowid FROM doc WHERE doc MATCH 'beta';",
        "SQL006.trigger": FTS5_DOCS + " UPDATE doc_data SET block = x'0000000100' WHERE id > 10;"
                          " SELECT rowid FROM doc WHERE doc MATCH 'beta';",
        # SQL007: trim() with a set of short characters (reach) / with one character of 300 bytes,
        # a lead byte and 299 continuation bytes, whose length wraps to 44 in 8 bits (trigger)
        "SQL007.reach": "SELECT trim('xxhixx', 'x'), rtrim('ab' || char(233, 233), char(233));",
        "SQL007.trigger": f"SELECT hex(trim('abc', x'c0{'80' * 299}'));",
        # SQL008: PRAGMA foreign_key_check on a one-column key (reach) / on a key that repeats its
        # table's only column four times, so its registers overrun the statement's (trigger)
        "SQL008.reach": "CREATE TABLE par(id INTEGER PRIMARY KEY); CREATE TABLE kid(pid REFERENCES par, note);"
                        " INSERT INTO par VALUES(1); INSERT INTO kid VALUES(1,'x'),(NULL,'y'); PRAGMA foreign_key_check;",
        "SQL008.trigger": "PRAGMA foreign_keys=OFF; CREATE TABLE kid(p, FOREIGN KEY(p,p,p,p) REFERENCES gone);"
                          " INSERT INTO kid VALUES(5); PRAGMA foreign_key_check(kid);",
        # SQL009: DISTINCT over a table with a UNIQUE index on a nullable column (reach) / a partial
        # UNIQUE index whose column the WHERE clause fixes, rows outside its WHERE repeating (trigger)
        "SQL009.reach": "CREATE TABLE tag(k, v); CREATE UNIQUE INDEX tag_k ON tag(k); INSERT INTO tag VALUES(1,'a'),(2,'b');"
                        " SELECT DISTINCT k FROM tag WHERE v='a';",
        "SQL009.trigger": "CREATE TABLE tag(k, v); CREATE UNIQUE INDEX tag_big ON tag(k) WHERE k>100;"
                          " INSERT INTO tag VALUES(3,'a'),(3,'b'); SELECT DISTINCT k FROM tag WHERE k=3;",
        # SQL010: a rowid seek with a real key (reach) / with the key 2^63, whose integer
        # approximation INT64_MAX the double comparison finds equal (trigger)
        "SQL010.reach": "CREATE TABLE big(id INTEGER PRIMARY KEY, tag); INSERT INTO big VALUES(1,'a'),(5,'b');"
                        " SELECT tag FROM big WHERE id >= 2.5;",
        "SQL010.trigger": "CREATE TABLE big(id INTEGER PRIMARY KEY, tag); INSERT INTO big VALUES(9223372036854775807,'max');"
                          " SELECT tag FROM big WHERE id >= 9223372036854775808;",
        # SQL011: an index range with both ends (reach) / the same range after an IN on the index's
        # second column that stat1 rows make the planner seek-scan (trigger)
        "SQL011.reach": SEEK_SCAN_RANGE + " SELECT c FROM m WHERE a=1 AND b=2 AND c BETWEEN 4 AND 9;",
        "SQL011.trigger": SEEK_SCAN_RANGE + " ANALYZE sqlite_schema; INSERT INTO sqlite_stat1 VALUES('m','m_abc','1000000 2 1 1');"
                          " ANALYZE sqlite_schema; SELECT c FROM m WHERE a=1 AND b IN (2,3) AND c BETWEEN 4 AND 9;",
        # SQL012: in a join (3.34.1 propagates constants only there), a constant propagated into a
        # comparison (reach) / into a function's argument, the column having BLOB affinity and
        # holding 7.0 (trigger)
        "SQL012.reach": CONST_JOIN + " SELECT w FROM cp, one WHERE v=7 AND v<8;",
        "SQL012.trigger": CONST_JOIN + " SELECT w FROM cp, one WHERE v=7 AND length(v)=1;",
        # SQL013: an index lookup driven by an == term (reach) / by h.ha=g.gk, which constrains the
        # index column hb only through the equivalence hb=gk=ha, unlikely() on the other term making
        # it the cheaper driver (trigger)
        "SQL013.reach": "CREATE TABLE e(a INT, b INT); CREATE INDEX e_b ON e(b); INSERT INTO e VALUES(1,3);"
                        " SELECT a FROM e WHERE b=3;",
        "SQL013.trigger": TRANSITIVE + " SELECT * FROM g CROSS JOIN h WHERE unlikely(h.hb=g.gk) AND h.ha=g.gk;",
    }
    library(HERE.name).write_inputs(seeds=sql(seeds), inputs=sql(inputs))


if __name__ == "__main__":
    main()
