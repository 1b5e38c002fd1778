/* SPDX-License-Identifier: MIT */
/*
 * futex-internal.h: futex(2) on 32-bit words of shared mappings (futex.c): not
 * private, since the words are shared between processes.
 */
#ifndef PBUS_FUTEX_INTERNAL_H
#define PBUS_FUTEX_INTERNAL_H

#include <stdint.h>

/* futex(2) on a shared 32-bit word: wait while *word == expected until the
 * absolute CLOCK_MONOTONIC @deadline_ns (negative: none); wake all. */
int pbus_futex_wait(const uint32_t *word, uint32_t expected, int64_t deadline_ns);
void pbus_futex_wake_all(const uint32_t *word);

#endif
