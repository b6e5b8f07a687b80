SELECT RUN_METRIC('android/cpu_info.sql');
SELECT RUN_METRIC('android/cpu_info.sql', 'k', 1, 'j', 2.5);
SELECT * FROM cluster_core_type;
SELECT RUN_METRIC('nope.sql');
SELECT RUN_METRIC('android/cpu_info.sql', 'k');
