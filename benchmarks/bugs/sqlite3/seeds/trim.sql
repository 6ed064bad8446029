SELECT trim('  pad  '), ltrim('xxkeepxx', 'x'), rtrim('tail;;', ';'), trim('[v]', '[]');
