-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.l3: Wattson's measured curves of the energy of L3
-- cache hits and misses by frequency, per SoC. We ship no device data
-- (see wattson.device_infos): empty.

CREATE PERFETTO TABLE _device_curves_l3 AS
SELECT
  NULL AS device, NULL AS freq_khz, NULL AS dep_policy, NULL AS dep_freq, NULL
  AS l3_hit, NULL AS l3_miss
WHERE 0;
