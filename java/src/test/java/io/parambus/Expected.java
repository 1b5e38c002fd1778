package io.parambus;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

/**
 * The tab-separated record files of tests/vectors (.expected, .writes, .states: README.md
 * "Formats"), and the Python literals of their value columns.
 */
final class Expected {
    private Expected() {
    }

    /** The records of a file: every non-comment, non-empty line split at tabs. */
    static List<String[]> records(String file) {
        try {
            List<String[]> out = new ArrayList<>();
            for (String line : Files.readAllLines(Installed.vectors().resolve(file))) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                out.add(line.split("\t", -1));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A Python literal: Boolean, java.math.BigInteger, Double (nan/inf included), String, List, or a Bytes. */
    static Object literal(String text) {
        Parser p = new Parser(text);
        Object v = p.value();
        p.skipSpaces();
        if (p.pos != text.length()) {
            throw new IllegalArgumentException("trailing text in literal " + text);
        }
        return v;
    }

    /** b'…' of a literal. */
    record Bytes(byte[] value) {
    }

    private static final class Parser {
        final String s;
        int pos;

        Parser(String s) {
            this.s = s;
        }

        void skipSpaces() {
            while (pos < s.length() && s.charAt(pos) == ' ') {
                pos++;
            }
        }

        Object value() {
            skipSpaces();
            char c = s.charAt(pos);
            if (c == '[' || c == '(') {
                char close = c == '[' ? ']' : ')';
                pos++;
                List<Object> list = new ArrayList<>();
                skipSpaces();
                if (s.charAt(pos) == close) {
                    pos++;
                    return list;
                }
                while (true) {
                    list.add(value());
                    skipSpaces();
                    char d = s.charAt(pos++);
                    if (d == close) {
                        return list;
                    }
                    if (d != ',') {
                        throw new IllegalArgumentException("bad list in " + s);
                    }
                }
            }
            if (c == '\'' || (c == 'b' && s.charAt(pos + 1) == '\'')) {
                boolean bytes = c == 'b';
                if (bytes) {
                    pos++;
                }
                pos++;
                StringBuilder b = new StringBuilder();
                while (s.charAt(pos) != '\'') {
                    char d = s.charAt(pos++);
                    if (d == '\\') {
                        char e = s.charAt(pos++);
                        switch (e) {
                            case 'u' -> {
                                b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                                pos += 4;
                            }
                            case 'x' -> {
                                b.append((char) Integer.parseInt(s.substring(pos, pos + 2), 16));
                                pos += 2;
                            }
                            case 'n' -> b.append('\n');
                            case 't' -> b.append('\t');
                            default -> b.append(e);
                        }
                    } else {
                        b.append(d);
                    }
                }
                pos++;
                if (bytes) {
                    byte[] out = new byte[b.length()];
                    for (int k = 0; k < out.length; k++) {
                        out[k] = (byte) b.charAt(k);
                    }
                    return new Bytes(out);
                }
                return b.toString();
            }
            int start = pos;
            while (pos < s.length() && ",)] ".indexOf(s.charAt(pos)) < 0) {
                pos++;
            }
            String tok = s.substring(start, pos);
            switch (tok) {
                case "True":
                    return Boolean.TRUE;
                case "False":
                    return Boolean.FALSE;
                case "nan":
                    return Double.NaN;
                case "inf":
                    return Double.POSITIVE_INFINITY;
                case "-inf":
                    return Double.NEGATIVE_INFINITY;
                default:
                    break;
            }
            if (tok.startsWith("0x")) {
                return new java.math.BigInteger(tok.substring(2), 16);
            }
            if (tok.contains(".") || tok.contains("e") || tok.contains("E")) {
                return Double.parseDouble(tok);
            }
            return new java.math.BigInteger(tok);
        }
    }
}
