/* SPDX-License-Identifier: MIT */
/*
 * test-schema-fuzz.c: a seeded mutation fuzzer for the compiled-schema
 * loader. Starting from valid schemas, it flips, inserts, deletes and
 * duplicates bytes and lines, thousands of times, and requires every result
 * to be either accepted or refused with one line of error; every accepted
 * schema must build a segment that passes validation. Run under ASan/UBSan
 * (make test does), it finds what a crash-free refusal hides.
 *
 * The seed is fixed so a failure reproduces; PBUS_FUZZ_ITERATIONS and
 * PBUS_FUZZ_SEED change the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <parambus/parambus.h>

#include "../../lib/segment-internal.h"
#include "../../lib/table-internal.h"
#include "pbus-check.h"

static const char *const seeds[] = {
	"pbus-schema 1\ninterface com.example.T 2.3\n"
	"enum com.example.T.Mode OFF=0 ON=1 TRIPPED=7\n"
	"param vset double unit=V min=0 max=30 step=0.001 default=1.5 flags=persistent group=g desc=V%20set\n"
	"param name string size=16 default=hello%20world flags=readonly class=constant\n"
	"param mode enum enum=com.example.T.Mode default=ON\n"
	"param raw bytes size=4 default=00ff10ab\n"
	"param arr int16[] count=4 default=1,-2,3\n"
	"param u uint64 min=1 max=18446744073709551615\n",
	"# banner\npbus-schema 1\ninterface x.Y 1.0\nparam a bool default=true\nparam b.c float max=2\n"
	"param d int8[] count=3 min=-1 max=1 default=\n",
	/* methods, broadcasts and their types (schema-rpc.c) */
	"pbus-schema 1\ninterface a.I 1.0\nparam p bool\n"
	"type a.I.L enum i32 LOW=-3 HIGH=2147483647\n"
	"type a.I.S struct tag=1402927182 name:string\n"
	"type a.I.P struct x:int32 y:integer:-5:5 z:a.I.L[] m:a.I.M u:a.I.U\n"
	"type a.I.U union n:int32 w:string p:a.I.P[]\n"
	"type a.I.M map string a.I.N\ntype a.I.N array bytes\n"
	"method m in=a:a.I.P,b:uint64 out=c:a.I.U error=a.I.L group=g\n"
	"method f:sel in=x:integer::10 flags=fireAndForget\n"
	"broadcast b out=t:a.I.L,s:string[] flags=selective\n",
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return n ? (uint32_t)(rng_state % n) : 0;
}

static size_t mutate(char *buf, size_t len, size_t cap)
{
	static const char alphabet[] = " =,%\n#.-0123456789abcdefABCDEF[]:_xyz\x80\xff";
	int rounds = 1 + (int)rnd(4);

	for (int k = 0; k < rounds; k++) {
		size_t at = len ? rnd((uint32_t)len) : 0;

		switch (rnd(5)) {
		case 0: /* flip a byte */
			if (len)
				buf[at] = (char)(buf[at] ^ (1 << rnd(8)));
			break;
		case 1: /* insert a byte */
			if (len + 1 < cap) {
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = alphabet[rnd(sizeof(alphabet) - 1)];
				len++;
			}
			break;
		case 2: /* delete a run */
			if (len) {
				size_t n = 1 + rnd(8);

				if (at + n > len)
					n = len - at;
				memmove(buf + at, buf + at + n, len - at - n);
				len -= n;
			}
			break;
		case 3: { /* duplicate a line */
			char *start = buf + at, *end;

			while (start > buf && start[-1] != '\n')
				start--;
			end = memchr(start, '\n', len - (size_t)(start - buf));
			if (end) {
				size_t n = (size_t)(end - start) + 1;

				if (len + n < cap) {
					memmove(start + n, start, len - (size_t)(start - buf));
					len += n;
				}
			}
			break;
		}
		default: /* replace a digit with a large number */
			if (len && buf[at] >= '0' && buf[at] <= '9' && len + 12 < cap) {
				memmove(buf + at + 10, buf + at, len - at);
				memcpy(buf + at, "4294967296", 10);
				len += 10;
			}
		}
	}
	return len;
}

static void fuzz_loader(void)
{
	const char *it = getenv("PBUS_FUZZ_ITERATIONS"), *seed = getenv("PBUS_FUZZ_SEED");
	long iterations = it ? atol(it) : 200000;
	char instance[64], buf[4096], err[512];
	long accepted = 0, refused = 0, built = 0;

	rng_state = seed ? strtoull(seed, NULL, 0) : 0x5eed5eedu;
	snprintf(instance, sizeof(instance), "fuzz-schema-%d", (int)getpid());
	for (long i = 0; i < iterations; i++) {
		const char *base = seeds[i % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t len = strlen(base);
		struct pbus_schema *s = NULL;
		int r;

		memcpy(buf, base, len);
		len = mutate(buf, len, sizeof(buf));
		err[0] = 0;
		r = pbus_schema_parse(buf, len, "fuzz.pbs", err, sizeof(err), &s);
		if (r == 0) {
			struct pbus_table *t = NULL;

			accepted++;
			/* Every accepted schema builds a valid segment (one in 16,
			 * to keep the run short: creating a segment makes files). */
			if (i % 16 == 0 && pbus_instance_create(instance, s, NULL, &t) == 0) {
				CHECK_EQ(pbus_segment_validate(t->base, t->size), 0);
				pbus_instance_remove(t);
				built++;
			}
			pbus_schema_free(s);
		} else {
			refused++;
			if (r != -EINVAL || s || !err[0] || strchr(err, '\n') || strncmp(err, "fuzz.pbs:", 9)) {
				CHECK_FAIL("iteration %ld: r=%d error '%s'", i, r, err);
			}
		}
	}
	printf("  %ld mutations: %ld accepted (%ld segments built), %ld refused\n", iterations,
	       accepted, built, refused);
	CHECK(accepted > 0 && refused > 0); /* the mutations reached both sides */
}

int main(void)
{
	pbus_check_suite("unit/schema-fuzz");
	RUN_CASE(fuzz_loader);
	CHECK_EXIT();
}
