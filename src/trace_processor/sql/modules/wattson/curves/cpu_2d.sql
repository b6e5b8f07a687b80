-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.cpu_2d: Wattson's measured curves of the power of a
-- CPU policy by its frequency and the frequency of the policy it
-- depends on, per SoC. We ship no device data (see
-- wattson.device_infos): empty.

CREATE PERFETTO TABLE _device_curves_2d AS
SELECT
  NULL AS device, NULL AS policy, NULL AS freq_khz, NULL AS dep_policy, NULL
  AS dep_freq, NULL AS static, NULL AS active, NULL AS idle0, NULL AS idle1,
  NULL AS interconnect
WHERE 0;
