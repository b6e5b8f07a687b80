-- SPDX-License-Identifier: Apache-2.0
-- android.user_list: the Android users (not Linux uids) the
-- android.user_list data source listed.

-- One row per Android user.
CREATE PERFETTO VIEW android_user_list(
  -- The Android user id (see android_process_metadata.user_id).
  android_user_id LONG,
  -- What kind of user the system says it is (HEADLESS, SECONDARY, GUEST...).
  type STRING
)
AS
SELECT u.android_user_id, u.type
FROM __intrinsic_android_user_list AS u;
