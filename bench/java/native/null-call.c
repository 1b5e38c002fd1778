/* SPDX-License-Identifier: MIT */
/*
 * null-call.c: the two empty functions of scenario 5's call benchmark
 * (docs/benchmarks.md, "Scenario 5"), in one shared library
 * (libpbus-bench-null.so) that the JMH benchmark CallBench loads:
 *
 *   pbus_bench_null()                       an empty C function, the target
 *                                           of the FFM downcalls (plain and
 *                                           Linker.Option.critical)
 *   Java_io_parambus_bench_NullJni_nothing  the same, as the JNI native
 *                                           method NullJni.nothing()
 *
 * JNI is here only to be measured against: the product uses the FFM API
 * alone (docs/java.md). Both functions do nothing, so what is timed is the
 * transition into native code and back, which is what the two mechanisms
 * differ in. noinline and the empty asm keep the compiler from reducing
 * either to something smaller than a call and a return.
 */
#include <jni.h>

__attribute__((visibility("default"), noinline)) void pbus_bench_null(void)
{
	__asm__ __volatile__("");
}

JNIEXPORT void JNICALL Java_io_parambus_bench_NullJni_nothing(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	__asm__ __volatile__("");
}
