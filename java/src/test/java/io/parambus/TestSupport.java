package io.parambus;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where the tests find the source tree and the C build (the system property pbus.build). */
public final class TestSupport {
    private TestSupport() {
    }

    /** The C build tree (tests/java/run-maven passes it); fails the test if it is not given. */
    static String build() {
        String b = System.getProperty("pbus.build", "");
        if (b.isEmpty()) {
            throw new IllegalStateException("the system property pbus.build (the C build tree) is not set: run the"
                    + " tests through tests/java/run-maven BUILD_DIR or mvn -Dpbus.build=BUILD_DIR");
        }
        return b;
    }

    /** A program of the C build, which must exist. */
    public static Path program(String relative) {
        Path p = Path.of(build(), relative);
        if (!Files.isExecutable(p)) {
            throw new IllegalStateException(p + " is missing: build the C side first (ninja -C " + build() + ")");
        }
        return p;
    }

    /** The top of the source tree (java/'s parent). */
    static String sourceTree() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("tests/vectors")) && Files.isDirectory(p.resolve("java"))) {
                return p.toString();
            }
        }
        throw new IllegalStateException("cannot find the source tree above " + here);
    }
}
