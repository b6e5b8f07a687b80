-- SPDX-License-Identifier: Apache-2.0
-- wattson.device_infos: what Wattson knows of the traced device: which
-- SoC it is, how its CPUs group into frequency policies, idle state
-- overrides, which GPU it models.
--
-- Wattson's models rest on measured data per supported SoC (Perfetto
-- ships it for some Pixel, MediaTek and Qualcomm parts). We ship no such
-- data: the device tables below are empty, so no device is recognized
-- and every Wattson estimate is empty, as Perfetto's are on devices it
-- does not support (every Linux machine among them).

INCLUDE PERFETTO MODULE android.device;
INCLUDE PERFETTO MODULE wattson.utils;

-- Per SoC and CPU, the extra time to count for leaving deep idle.
CREATE PERFETTO TABLE _device_cpu_deep_idle_offsets AS
SELECT NULL AS device, NULL AS cpu, NULL AS offset_ns WHERE 0;

-- Device code names and the SoC Wattson models them as.
CREATE PERFETTO TABLE _wattson_device_map AS
SELECT NULL AS device, NULL AS wattson_device WHERE 0;

-- The supported SoC the trace was taken on (from the SoC model in the
-- metadata, a guest's first, else from the device's code name), if any.
CREATE PERFETTO TABLE _wattson_device AS
WITH soc AS (
  SELECT coalesce(
    (SELECT m.str_value FROM metadata AS m WHERE m.name = 'android_guest_soc_model' LIMIT 1),
    (SELECT m.str_value FROM metadata AS m WHERE m.name = 'android_soc_model' LIMIT 1),
    (
      SELECT dm.wattson_device
      FROM _wattson_device_map AS dm
      JOIN android_device_name AS d ON d.name = dm.device
    )
  ) AS name
)
SELECT DISTINCT s.name
FROM soc AS s
JOIN _device_cpu_deep_idle_offsets AS o ON o.device = s.name;

-- Per SoC, the frequency policy of each CPU.
CREATE PERFETTO TABLE _cpu_to_policy_map AS
SELECT NULL AS device, NULL AS cpu, NULL AS policy WHERE 0;

-- The traced device's CPUs and their policies.
CREATE PERFETTO TABLE _dev_cpu_policy_map AS
SELECT m.cpu, m.policy
FROM _cpu_to_policy_map AS m
JOIN _wattson_device AS d ON d.name = m.device
ORDER BY m.cpu;

-- The traced device's policies.
CREATE PERFETTO TABLE _device_policies AS
SELECT DISTINCT m.policy FROM _dev_cpu_policy_map AS m;

-- For each CPU 0-7, the mask of the CPUs sharing its policy.
CREATE PERFETTO TABLE _policy_masks AS
WITH p AS (
  SELECT
    max(iif(m.cpu = 0, m.policy, -1)) AS p0,
    max(iif(m.cpu = 1, m.policy, -1)) AS p1,
    max(iif(m.cpu = 2, m.policy, -1)) AS p2,
    max(iif(m.cpu = 3, m.policy, -1)) AS p3,
    max(iif(m.cpu = 4, m.policy, -1)) AS p4,
    max(iif(m.cpu = 5, m.policy, -1)) AS p5,
    max(iif(m.cpu = 6, m.policy, -1)) AS p6,
    max(iif(m.cpu = 7, m.policy, -1)) AS p7
  FROM _dev_cpu_policy_map AS m
)
SELECT
  _policy_mask!(p0, p0, p1, p2, p3, p4, p5, p6, p7) AS m0,
  _policy_mask!(p1, p0, p1, p2, p3, p4, p5, p6, p7) AS m1,
  _policy_mask!(p2, p0, p1, p2, p3, p4, p5, p6, p7) AS m2,
  _policy_mask!(p3, p0, p1, p2, p3, p4, p5, p6, p7) AS m3,
  _policy_mask!(p4, p0, p1, p2, p3, p4, p5, p6, p7) AS m4,
  _policy_mask!(p5, p0, p1, p2, p3, p4, p5, p6, p7) AS m5,
  _policy_mask!(p6, p0, p1, p2, p3, p4, p5, p6, p7) AS m6,
  _policy_mask!(p7, p0, p1, p2, p3, p4, p5, p6, p7) AS m7
FROM p;

-- The SoCs whose estimate needs the DSU's devfreq.
CREATE PERFETTO TABLE _use_devfreq AS
SELECT NULL AS device WHERE 0;

-- One row (1) when the traced device needs devfreq.
CREATE PERFETTO TABLE _use_devfreq_for_calc AS
SELECT 1 AS devfreq_necessary
FROM _use_devfreq AS u
JOIN _wattson_device AS d ON d.name = u.device;

-- One row (0) when it does not.
CREATE PERFETTO TABLE _skip_devfreq_for_calc AS
SELECT 0 AS devfreq_necessary
WHERE NOT EXISTS (SELECT 1 FROM _use_devfreq_for_calc);

-- Per SoC, idle states modelled as another.
CREATE PERFETTO TABLE _idle_state_map AS
SELECT NULL AS device, NULL AS nominal_idle, NULL AS override_idle WHERE 0;

-- The traced device's idle state overrides.
CREATE PERFETTO TABLE _idle_state_map_override AS
SELECT i.nominal_idle, i.override_idle
FROM _idle_state_map AS i
JOIN _wattson_device AS d ON d.name = i.device;

-- The deepest idle state modelled (1 without overrides).
CREATE PERFETTO TABLE _deepest_idle AS
SELECT coalesce((SELECT max(o.override_idle) FROM _idle_state_map_override AS o), 1) AS idle;

-- Per SoC, the CPUs that vote for their dependency's frequency.
CREATE PERFETTO TABLE _vote_by_freq AS
SELECT NULL AS device, NULL AS cpu WHERE 0;

-- The traced device's CPUs with whether they vote by frequency.
CREATE PERFETTO TABLE _dev_vote_by_freq AS
WITH both_kinds AS (
  SELECT m.cpu, 0 AS vote_by_freq
  FROM _dev_cpu_policy_map AS m
  WHERE m.cpu NOT IN (SELECT v.cpu FROM _vote_by_freq AS v WHERE v.cpu IS NOT NULL)
  UNION ALL
  SELECT v.cpu, 1 AS vote_by_freq
  FROM _vote_by_freq AS v
  JOIN _wattson_device AS d ON d.name = v.device
)
SELECT b.cpu, b.vote_by_freq FROM both_kinds AS b ORDER BY b.cpu;

-- Per SoC, the GPU id Wattson models.
CREATE PERFETTO TABLE _gpuid_map AS
SELECT NULL AS device, NULL AS gpu_id WHERE 0;
