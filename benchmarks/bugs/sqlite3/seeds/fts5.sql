CREATE VIRTUAL TABLE f USING fts5(body, detail='none'); INSERT INTO f(rowid, body) VALUES(1,'one two'),(5,'two three'); SELECT rowid FROM f('two');
