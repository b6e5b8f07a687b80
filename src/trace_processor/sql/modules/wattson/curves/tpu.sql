-- SPDX-License-Identifier: Apache-2.0
-- wattson.curves.tpu: Wattson's measured curves of the power of the TPU
-- by cluster, requests and frequency, per SoC. We ship no device data
-- (see wattson.device_infos): empty.

CREATE PERFETTO TABLE _tpu_device_curves AS
SELECT
  NULL AS device, NULL AS cluster, NULL AS requests, NULL AS freq, NULL AS
  active
WHERE 0;
