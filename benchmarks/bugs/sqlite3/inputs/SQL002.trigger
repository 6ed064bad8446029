SELECT 'xyz' LIKE 'x%' ESCAPE '_';
