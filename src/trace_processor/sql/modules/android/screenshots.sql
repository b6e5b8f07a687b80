-- SPDX-License-Identifier: Apache-2.0
-- android.screenshots: the screenshots recorded in the trace, for the UI.

-- Every screenshot slice (name 'Screenshot', category
-- 'android_screenshot', with a screenshot.jpg_image arg).
CREATE PERFETTO TABLE android_screenshots(
  -- The slice.
  id ID(slice.id),
  -- When it was taken.
  ts TIMESTAMP,
  -- The slice's duration (0: they are instants).
  dur DURATION,
  -- The slice's name.
  name STRING
)
AS
SELECT s.id, s.ts, s.dur, s.name
FROM slice AS s
JOIN args AS a ON a.arg_set_id = s.arg_set_id
WHERE s.name = 'Screenshot'
  AND s.category = 'android_screenshot'
  AND a.key = 'screenshot.jpg_image';
