package io.parambus.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The fuzz targets' seeds from the source tree: the images and frames of tests/vectors
 * and the compiled schemas of the fixtures, read where they are (so that the seeds
 * follow the vectors), as JUnit arguments for a {@code @MethodSource} in front of a
 * {@code @FuzzTest} (Jazzer runs them as regression inputs and, when fuzzing, adds them
 * to the corpus). Committed seed files ({@code <Test>Inputs/<method>/}) hold the edge
 * cases and the inputs of findings. Stateless: any thread.
 */
public final class Vectors {
    private Vectors() {
    }

    /** The top of the source tree (java/'s parent). */
    public static Path top() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("tests/vectors")) && Files.isDirectory(p.resolve("java"))) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find the source tree above " + Path.of("").toAbsolutePath());
    }

    /** A file of the source tree as bytes ({@code tests/vectors/segment.pbs}). */
    public static byte[] file(String relative) {
        try {
            return Files.readAllBytes(top().resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A .hex file of tests/vectors as bytes. */
    public static byte[] hex(String name) {
        String text = new String(file("tests/vectors/" + name), java.nio.charset.StandardCharsets.US_ASCII);
        return HexFormat.of().parseHex(text.replace("\n", ""));
    }

    /** Every file of tests/vectors whose name matches {@code glob} ({@code segment-bad-*.hex}), sorted. */
    public static List<String> names(String glob) {
        List<String> out = new ArrayList<>();
        try (var dir = Files.newDirectoryStream(top().resolve("tests/vectors"), glob)) {
            dir.forEach(p -> out.add(p.getFileName().toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(null);
        return out;
    }

    /** The frames of tests/vectors/socket-frames.txt by name, in file order. */
    public static Map<String, byte[]> frames() {
        Map<String, byte[]> out = new LinkedHashMap<>();
        String name = null;
        StringBuilder hex = new StringBuilder();
        String text = new String(file("tests/vectors/socket-frames.txt"), java.nio.charset.StandardCharsets.UTF_8);
        for (String line : (text + "\n\n").split("\n", -1)) {
            if (line.startsWith("#")) {
                continue;
            }
            if (line.isEmpty()) {
                if (name != null && hex.length() > 0) {
                    out.put(name, HexFormat.of().parseHex(hex.toString().replace(" ", "")));
                }
                name = null;
                hex.setLength(0);
            } else if (line.startsWith("frame ")) {
                name = line.substring(6).trim();
            } else if (line.startsWith("hex ")) {
                hex.append(line.substring(4));
            }
        }
        return out;
    }

    /** Byte arrays as the arguments of a one-parameter fuzz test. */
    public static Stream<Arguments> arguments(List<byte[]> inputs) {
        return inputs.stream().map(b -> Arguments.of((Object) b));
    }
}
