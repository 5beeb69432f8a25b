// SPDX-License-Identifier: MIT OR Apache-2.0
/* bbrlab_jitter: seed 001's variant (eqs. 8-11 and the shortened cycle). */
#define BBRLAB_JITTER 1
#include "bbrlab_cc.h"

BBRLAB_OPS(bbrlab_jitter, "bbrlab_jitter");
