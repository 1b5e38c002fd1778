// SPDX-License-Identifier: MIT
package io.parambus.bench;

/**
 * The instance the benchmarks read, named by bench/run-java.py in the
 * system property {@code pbus.bench.instance} (a pbusd serving
 * bench/schemas/param-table.pbs).
 *
 * <p>Thread-safety: stateless.
 */
final class Instance {
    private Instance() {
    }

    /**
     * The instance's name.
     *
     * @return the value of {@code pbus.bench.instance}
     * @throws IllegalStateException if the property is not set
     */
    static String name() {
        String name = System.getProperty("pbus.bench.instance");
        if (name == null || name.isEmpty()) {
            throw new IllegalStateException("the system property pbus.bench.instance (a running "
                    + "instance of bench/schemas/param-table.pbs) is not set: run the benchmarks "
                    + "with bench/run-java.py");
        }
        return name;
    }
}
