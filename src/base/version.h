/* SPDX-License-Identifier: Apache-2.0 */
/* version.h - the one version string every perfetto-c binary prints. */
#ifndef PFC_BASE_VERSION_H
#define PFC_BASE_VERSION_H

#define PFC_VERSION "0.1.0"
/* What --version prints and what the service records as its version. */
#define PFC_VERSION_STRING "perfetto-c v" PFC_VERSION

#endif
