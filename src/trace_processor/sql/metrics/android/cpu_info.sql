-- SPDX-License-Identifier: Apache-2.0
-- android/cpu_info.sql: the core type of each CPU cluster and the power
-- each core draws per frequency on the device the trace came from (its
-- build fingerprint names one of power_profile's devices). Safe to run
-- more than once: everything it makes is dropped first.

SELECT RUN_METRIC('android/power_profile_data.sql');

-- Core type by cluster number.
DROP TABLE IF EXISTS cluster_core_type;
CREATE PERFETTO TABLE cluster_core_type AS
SELECT column1 AS cluster, column2 AS core_type
FROM (VALUES (0, 'little'), (1, 'big'), (2, 'bigger'));

-- The power_profile rows of this trace's device.
DROP VIEW IF EXISTS device_power_profile;
CREATE PERFETTO VIEW device_power_profile AS
SELECT profile.cpu, profile.cluster, profile.freq, profile.power
FROM power_profile AS profile
WHERE profile.device IN (
  SELECT p.device
  FROM power_profile AS p, metadata AS m
  WHERE m.name = 'android_build_fingerprint'
    AND instr(m.str_value, p.device) > 0
);

-- The cluster of each CPU of the device.
DROP VIEW IF EXISTS core_cluster_per_cpu;
CREATE PERFETTO VIEW core_cluster_per_cpu AS
SELECT cpu, cluster
FROM device_power_profile
GROUP BY cpu, cluster;

-- The core type of each CPU of the device.
DROP VIEW IF EXISTS core_type_per_cpu;
CREATE PERFETTO VIEW core_type_per_cpu AS
SELECT c.cpu, t.core_type
FROM core_cluster_per_cpu AS c
JOIN cluster_core_type AS t ON t.cluster = c.cluster;

-- Power per (core type, frequency) on the device.
DROP VIEW IF EXISTS cpu_cluster_power;
CREATE PERFETTO VIEW cpu_cluster_power AS
SELECT t.core_type, d.freq, d.power
FROM device_power_profile AS d
JOIN cluster_core_type AS t ON t.cluster = d.cluster
GROUP BY t.core_type, d.freq, d.power;
