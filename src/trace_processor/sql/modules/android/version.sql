-- SPDX-License-Identifier: Apache-2.0
-- android.version: the Android SDK version of the traced device.

-- The SDK version from the metadata (android_sdk_version), or NULL.
CREATE PERFETTO FUNCTION _android_sdk_version()
RETURNS LONG
AS
SELECT m.int_value
FROM metadata AS m
WHERE m.name = 'android_sdk_version'
LIMIT 1;
