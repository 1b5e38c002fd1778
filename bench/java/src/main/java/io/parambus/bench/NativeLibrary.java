// SPDX-License-Identifier: MIT
package io.parambus.bench;

/**
 * Where the benchmark's C library is: {@code libpbus-bench-null.so}, built by
 * bench/CMakeLists.txt and named by bench/run-java.py in the system property
 * {@code pbus.bench.null}.
 *
 * <p>Thread-safety: stateless.
 */
final class NativeLibrary {
    private NativeLibrary() {
    }

    /**
     * The library's path.
     *
     * @return the value of {@code pbus.bench.null}
     * @throws IllegalStateException if the property is not set
     */
    static String path() {
        String path = System.getProperty("pbus.bench.null");
        if (path == null || path.isEmpty()) {
            throw new IllegalStateException("the system property pbus.bench.null (the path of "
                    + "libpbus-bench-null.so) is not set: run the benchmarks with bench/run-java.py");
        }
        return path;
    }
}
