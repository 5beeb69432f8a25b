// SPDX-License-Identifier: MIT OR Apache-2.0
/* bbrlab_bbr: BBR v1 as Linux's tcp_bbr.c, the control case. */
#define BBRLAB_JITTER 0
#include "bbrlab_cc.h"

BBRLAB_OPS(bbrlab_bbr, "bbrlab_bbr");
