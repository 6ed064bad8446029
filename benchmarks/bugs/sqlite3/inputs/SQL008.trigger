PRAGMA foreign_keys=OFF; CREATE TABLE kid(p, FOREIGN KEY(p,p,p,p) REFERENCES gone); INSERT INTO kid VALUES(5); PRAGMA foreign_key_check(kid);
