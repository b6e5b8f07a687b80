CREATE VIRTUAL TABLE fg USING __intrinsic_flamegraph((
  SELECT 1 AS id, NULL AS parent_id, 'main' AS name, 1 AS value, 'm' AS g, 0.5 AS w, 'x' AS lbl
  UNION ALL SELECT 2, 1, 'a', 2, 'm', 1.25, 'p'
  UNION ALL SELECT 3, 2, 'c', 4, 'n', 2.0, 'q'
  UNION ALL SELECT 4, 1, 'b', 8, 'm', 0.0, 'r'
  UNION ALL SELECT 5, 4, 'c', 3, 'm', 3.5, NULL
  UNION ALL SELECT 6, 4, 'a', 0, 'm', 1.0, 's'
  UNION ALL SELECT 7, 6, 'c', 5, 'n', 0.25, 't'
  UNION ALL SELECT 8, NULL, 'main', 6, 'm', 1.0, 'u'
  UNION ALL SELECT 9, 8, 'a', 7, 'o', 2.0, 'v'
  UNION ALL SELECT 10, 9, 'c', 1, 'n', 1.0, 'w'
));
SELECT * FROM fg(__intrinsic_flamegraph_config('value','lbl'));
