/* SPDX-License-Identifier: MIT */
/*
 * alloc-count.h - count heap allocations, to prove that a hot path makes
 * none.  Include in exactly one file of a test program: it interposes
 * malloc, calloc, realloc, posix_memalign, aligned_alloc and free, forwards
 * to the C library through dlsym(RTLD_NEXT), and counts the allocating calls
 * made while alloc_counting is set.  dlsym() itself may allocate before the
 * real functions are known; those few requests come from a static buffer.
 */
#ifndef PBUS_HW_ALLOC_COUNT_H
#define PBUS_HW_ALLOC_COUNT_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static volatile int alloc_counting;
static volatile unsigned long alloc_count;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void (*real_free)(void *);

static _Alignas(16) unsigned char boot_heap[16384];
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (boot_used + n > sizeof(boot_heap))
		return NULL;
	void *p = boot_heap + boot_used;
	boot_used += n;
	memset(p, 0, n);
	return p;
}

static int from_boot(const void *p)
{
	return (const unsigned char *)p >= boot_heap && (const unsigned char *)p < boot_heap + sizeof(boot_heap);
}

static void resolve(void)
{
	if (real_free || resolving)
		return;
	resolving = 1;
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

void *malloc(size_t n)
{
	resolve();
	if (!real_malloc)
		return boot_alloc(n);
	if (alloc_counting)
		alloc_count++;
	return real_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	resolve();
	if (!real_calloc)
		return boot_alloc(n * m);
	if (alloc_counting)
		alloc_count++;
	return real_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	resolve();
	if (alloc_counting)
		alloc_count++;
	if (from_boot(p)) {
		void *q = real_malloc(n);
		if (q)
			memcpy(q, p, n); /* boot blocks are small; over-read stays in boot_heap */
		return q;
	}
	return real_realloc(p, n);
}

int posix_memalign(void **ret, size_t align, size_t n)
{
	resolve();
	if (alloc_counting)
		alloc_count++;
	return real_posix_memalign(ret, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	resolve();
	if (alloc_counting)
		alloc_count++;
	return real_aligned_alloc(align, n);
}

void free(void *p)
{
	if (!p || from_boot(p))
		return;
	resolve();
	if (real_free)
		real_free(p);
}

#endif
