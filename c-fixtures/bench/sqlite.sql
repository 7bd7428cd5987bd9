-- The SQLite shell's bench-intrusion workload: a 500000-row table built, indexed, scanned,
-- sorted, grouped and joined in memory, with deterministic output.
PRAGMA journal_mode=OFF;
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<500000) INSERT INTO t SELECT x, hex(x*2654435761 % 1000003), x*1.5 FROM s;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(c) FROM t WHERE b > '8';
SELECT b FROM t ORDER BY b LIMIT 5 OFFSET 1000;
SELECT a%100, count(*), avg(c) FROM t GROUP BY a%100 ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 100000;
