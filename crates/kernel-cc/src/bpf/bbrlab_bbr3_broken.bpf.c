// SPDX-License-Identifier: MIT OR Apache-2.0
/* bbrlab_bbr3 with one deliberate verifier error (the socket-storage
 * pointer used without its NULL check), built only so a root test can see
 * that a rejected load reports the verifier's own words
 * (kernel_cc::load_rejected_variant()). Never registered. */
#define BBRLAB_BBR3_BROKEN 1
#include "bbrlab_bbr3.bpf.c"
