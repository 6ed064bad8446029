SELECT 'abc' LIKE 'a%', 'abc' LIKE 'a_c' ESCAPE 'x', 'a%c' LIKE 'a\%c' ESCAPE '\';
