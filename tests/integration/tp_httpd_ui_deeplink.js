// SPDX-License-Identifier: Apache-2.0
// tp_httpd_ui_deeplink.js - runs the shared UI driver (ui_drive.js, path in
// UI_DRIVE_REAL) with UI_DEEPLINK appended to the URL it opens, so that the
// UI selects an event when the trace is ready (Perfetto's deeplink args
// "table", "ts", "dur") and its details panel runs its queries. Put beside
// a link to ui_check.sh, which runs "ui_drive.js" from its own folder.
'use strict';
const i = process.argv.indexOf('--url');
if (i > 0 && i + 1 < process.argv.length && process.env.UI_DEEPLINK)
  process.argv[i + 1] += process.env.UI_DEEPLINK;
require(process.env.UI_DRIVE_REAL);
