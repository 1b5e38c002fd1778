// SPDX-License-Identifier: MIT
package io.parambus.bench;

/**
 * The JNI half of the null-call comparison (docs/benchmarks.md, Scenario 5):
 * one empty native method, implemented by {@code Java_io_parambus_bench_NullJni_nothing}
 * in {@code bench/java/native/null-call.c}. JNI exists here only to be
 * measured against the FFM downcalls of {@link CallBench}; the product uses
 * the FFM API alone.
 *
 * <p>Thread-safety: stateless; may be called from any thread.
 */
final class NullJni {
    private NullJni() {
    }

    /**
     * Loads the library that implements {@link #nothing()}.
     *
     * @param path the absolute path of {@code libpbus-bench-null.so}
     * @throws UnsatisfiedLinkError if it cannot be loaded
     */
    static void load(String path) {
        System.load(path);
    }

    /** Does nothing, in C, through JNI. */
    static native void nothing();
}
