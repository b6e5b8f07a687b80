-- SPDX-License-Identifier: Apache-2.0
-- android.device: the device's code name, from its build fingerprint.

-- The device code name in a build fingerprint
-- ('brand/product/device:release/...' gives 'device').
CREATE PERFETTO FUNCTION android_device_name_from_fingerprint(
  -- The build fingerprint.
  fingerprint STRING
)
-- The device code name.
RETURNS STRING
AS
SELECT str_split(str_split($fingerprint, '/', 2), ':', 0);

-- The code name of each machine with a build fingerprint.
CREATE PERFETTO TABLE android_device_name(
  -- The device code name.
  name STRING,
  -- The machine.
  machine_id JOINID(machine.id)
)
AS
SELECT
  android_device_name_from_fingerprint(m.android_build_fingerprint) AS name,
  m.id AS machine_id
FROM machine AS m
WHERE m.android_build_fingerprint IS NOT NULL;
