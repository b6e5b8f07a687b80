-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.cpu_1d: Wattson's measured curves of the power of one
-- CPU policy by frequency and idle state, per SoC. We ship no device
-- data (see wattson.device_infos): empty.

CREATE PERFETTO TABLE _device_curves_1d AS
SELECT
  NULL AS device, NULL AS policy, NULL AS freq_khz, NULL AS static, NULL AS
  active, NULL AS idle0, NULL AS idle1
WHERE 0;
