/* SPDX-License-Identifier: Apache-2.0 */
/* tracebox.h - the multi-call binary: applet dispatch and autostart mode. */
#ifndef PFC_TRACEBOX_TRACEBOX_H
#define PFC_TRACEBOX_TRACEBOX_H

int tracebox_main(int argc, char **argv);

#endif
