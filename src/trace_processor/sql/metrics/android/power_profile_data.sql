-- SPDX-License-Identifier: Apache-2.0
-- android/power_profile_data.sql: power_profile, the power (mA) each CPU
-- core of a device draws at each frequency (kHz), keyed by a device name
-- that appears in the build fingerprint of its traces. Made empty, with
-- its columns: we ship no device's profile yet (upstream fills it from
-- Android's power_profile.xml of 15 Pixel devices), so the views over it
-- (android/cpu_info.sql) give no rows for any device.

DROP TABLE IF EXISTS power_profile;
CREATE TABLE power_profile(
  device STRING,
  cpu INT,
  cluster INT,
  freq INT,
  power DOUBLE,
  UNIQUE(device, cpu, cluster, freq)
);
