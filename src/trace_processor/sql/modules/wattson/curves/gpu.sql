-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.gpu: Wattson's measured curves of the power of the GPU
-- by frequency and power state, per SoC. We ship no device data (see
-- wattson.device_infos): empty.

CREATE PERFETTO TABLE _gpu_device_curves AS
SELECT
  NULL AS device, NULL AS freq_khz, NULL AS active, NULL AS idle1, NULL AS
  idle2
WHERE 0;
