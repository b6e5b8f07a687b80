-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.utils: the traced device's curves out of Wattson's
-- per-SoC curves, reshaped for lookups by (frequency, idle state), and
-- which CPUs depend on which.

INCLUDE PERFETTO MODULE wattson.curves.cpu_1d;
INCLUDE PERFETTO MODULE wattson.curves.cpu_2d;
INCLUDE PERFETTO MODULE wattson.curves.gpu;
INCLUDE PERFETTO MODULE wattson.curves.l3;
INCLUDE PERFETTO MODULE wattson.curves.tpu;
INCLUDE PERFETTO MODULE wattson.device_infos;
INCLUDE PERFETTO MODULE wattson.utils;

-- The device's 1D curves.
CREATE PERFETTO TABLE _filtered_curves_1d_raw AS
SELECT pm.policy, c.freq_khz, c.active, c.idle0, c.idle1, c.static
FROM _device_curves_1d AS c
JOIN _wattson_device AS d ON d.name = c.device
JOIN _dev_cpu_policy_map AS pm ON pm.policy = c.policy;

-- The same, one row per idle state (-1 active, 0, 1).
CREATE PERFETTO TABLE _filtered_curves_1d AS
SELECT r.policy, r.freq_khz, -1 AS idle, r.active AS curve_value, r.static
FROM _filtered_curves_1d_raw AS r
UNION
SELECT r.policy, r.freq_khz, 0, r.idle0, r.static FROM _filtered_curves_1d_raw AS r
UNION
SELECT r.policy, r.freq_khz, 1, r.idle1, r.static FROM _filtered_curves_1d_raw AS r;

CREATE PERFETTO INDEX freq_1d ON _filtered_curves_1d(policy, freq_khz, idle);

-- The device's 2D curves.
CREATE PERFETTO TABLE _filtered_curves_2d_raw AS
SELECT
  c.policy, c.freq_khz, c.dep_policy, c.dep_freq, c.active, c.idle0, c.idle1, c.static,
  c.interconnect
FROM _device_curves_2d AS c
JOIN _wattson_device AS d ON d.name = c.device;

-- The same, one row per idle state.
CREATE PERFETTO TABLE _filtered_curves_2d AS
SELECT r.freq_khz, r.dep_policy, r.dep_freq, -1 AS idle, r.static, r.active AS curve_value
FROM _filtered_curves_2d_raw AS r
UNION
SELECT r.freq_khz, r.dep_policy, r.dep_freq, 0, r.static, r.idle0 FROM _filtered_curves_2d_raw AS r
UNION
SELECT r.freq_khz, r.dep_policy, r.dep_freq, 1, r.static, r.idle1 FROM _filtered_curves_2d_raw AS r;

CREATE PERFETTO INDEX freq_2d ON _filtered_curves_2d(freq_khz, dep_policy, dep_freq, idle);

-- The device's L3 curves.
CREATE PERFETTO TABLE _filtered_curves_l3 AS
SELECT c.freq_khz, c.dep_policy, c.dep_freq, c.l3_hit, c.l3_miss
FROM _device_curves_l3 AS c
JOIN _wattson_device AS d ON d.name = c.device;

CREATE PERFETTO INDEX freq_l3 ON _filtered_curves_l3(freq_khz, dep_policy, dep_freq);

-- The device's GPU curves.
CREATE PERFETTO TABLE _gpu_filtered_curves_raw AS
SELECT c.freq_khz, c.active, c.idle1, c.idle2
FROM _gpu_device_curves AS c
JOIN _wattson_device AS d ON d.name = c.device;

-- The same, one row per GPU power state (2 active, 1, 0).
CREATE PERFETTO TABLE _gpu_filtered_curves AS
SELECT r.freq_khz, 2 AS idle, r.active AS curve_value FROM _gpu_filtered_curves_raw AS r
UNION ALL
SELECT r.freq_khz, 1 AS idle, r.idle1 AS curve_value FROM _gpu_filtered_curves_raw AS r
UNION ALL
SELECT r.freq_khz, 0 AS idle, r.idle2 AS curve_value FROM _gpu_filtered_curves_raw AS r;

CREATE PERFETTO INDEX gpu_freq ON _gpu_filtered_curves(freq_khz, idle);

-- The device's TPU curves.
CREATE PERFETTO TABLE _tpu_filtered_curves AS
SELECT c.cluster, c.freq, c.requests, c.active
FROM _tpu_device_curves AS c
JOIN _wattson_device AS d ON d.name = c.device;

CREATE PERFETTO INDEX tpu_curves ON _tpu_filtered_curves(cluster, freq, requests);

-- The interconnect parts of the 2D curves.
CREATE PERFETTO TABLE _filtered_curves_interconnect AS
SELECT r.policy, r.freq_khz, r.dep_policy, r.dep_freq, r.interconnect AS curve_value
FROM _filtered_curves_2d_raw AS r
WHERE r.interconnect > 0;

CREATE PERFETTO INDEX freq_interconnect
ON _filtered_curves_interconnect(policy, freq_khz, dep_policy, dep_freq);

-- The CPUs whose curves depend on the DSU.
CREATE PERFETTO TABLE _cpu_w_dsu_dependency AS
SELECT DISTINCT pm.cpu
FROM _filtered_curves_2d_raw AS r
JOIN _dev_cpu_policy_map AS pm ON pm.policy = r.policy
WHERE r.dep_policy = _dsu_dep!();

-- Per CPU with a dependency, the policy it depends on and the lowest
-- frequency voted for it.
CREATE PERFETTO TABLE _cpu_w_dependency_default_vote AS
WITH per_policy AS (
  SELECT r.policy, r.dep_policy, min(r.dep_freq) AS dep_freq
  FROM _filtered_curves_2d_raw AS r
  GROUP BY r.policy
)
SELECT pm.cpu, p.dep_policy, p.dep_freq
FROM per_policy AS p
JOIN _dev_cpu_policy_map AS pm ON pm.policy = p.policy;

-- The CPUs with a static power part in their curves.
CREATE PERFETTO TABLE _cpus_for_static AS
SELECT DISTINCT pm.cpu
FROM _filtered_curves_2d_raw AS r
JOIN _dev_cpu_policy_map AS pm ON pm.policy = r.policy
WHERE r.static > 0
UNION
SELECT DISTINCT pm.cpu
FROM _filtered_curves_1d AS c
JOIN _dev_cpu_policy_map AS pm ON pm.policy = c.policy
WHERE c.static > 0;

-- Pairs of CPUs where the first's curve depends on the second's policy
-- (not the DSU).
CREATE PERFETTO TABLE _cpu_lut_dependencies AS
WITH
  base AS (
    SELECT DISTINCT pm.cpu, pm.policy
    FROM _filtered_curves_2d_raw AS r
    JOIN _dev_cpu_policy_map AS pm ON pm.policy = r.policy
    WHERE r.dep_policy != _dsu_dep!()
  ),
  deps AS (
    SELECT DISTINCT pm.cpu AS dep_cpu, pm.policy AS dep_policy
    FROM _filtered_curves_2d_raw AS r
    JOIN _dev_cpu_policy_map AS pm ON pm.policy = r.dep_policy
  )
SELECT b.cpu, d.dep_cpu
FROM base AS b
CROSS JOIN deps AS d
WHERE b.policy != d.dep_policy;
