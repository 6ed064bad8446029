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
    }
    library(HERE.name).write_inputs(seeds=sql(seeds), inputs=sql(inputs))


if __name__ == "__main__":
    main()
