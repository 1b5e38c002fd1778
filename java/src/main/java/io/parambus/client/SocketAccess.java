package io.parambus.client;

import io.parambus.ParambusException;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.ArrayList;
import java.util.List;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The way to pbusd's socket (docs/socket-protocol.md §1): where {@code INSTANCE.sock} is,
 * and the check that whoever listens there is a trusted owner (docs/security.md §3),
 * done with the kernel's {@code SO_PEERCRED} right after {@code connect} and before a
 * byte is sent, as the C client does. Java has no public numeric uid: principals are
 * compared, which the JDK does by uid. Stateless apart from the cached process uids:
 * any thread.
 */
final class SocketAccess {
    private static final int INSTANCE_NAME_MAX = 48;
    private static volatile long[] processUids;

    private SocketAccess() {
    }

    /** Whether {@code name} is an instance name (the C library's rule: 1…48 of [A-Za-z0-9_.-], not starting with '.' or '-'). */
    static boolean instanceNameValid(String name) {
        return name != null && !name.isEmpty() && name.length() <= INSTANCE_NAME_MAX && name.matches("[A-Za-z0-9_.-]+")
                && name.charAt(0) != '.' && name.charAt(0) != '-';
    }

    /** This process's real and effective uid, from {@code /proc/self/status} (read once). */
    static long[] processUids() {
        long[] u = processUids;
        if (u == null) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    if (line.startsWith("Uid:")) {
                        String[] f = line.substring(4).trim().split("\\s+");
                        u = new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
                        break;
                    }
                }
            } catch (IOException | RuntimeException e) {
                throw new ParambusException("EIO", "read /proc/self/status: " + e.getMessage() + " (EIO)");
            }
            if (u == null) {
                throw new ParambusException("EIO", "read /proc/self/status: no Uid line (EIO)");
            }
            processUids = u;
        }
        return u;
    }

    /**
     * The socket's path: {@code dir/INSTANCE.sock} if a directory is given, else the first
     * of {@code PBUS_SOCKET_DIR}, {@code /run/parambus}, {@code $XDG_RUNTIME_DIR/parambus},
     * {@code /tmp/parambus-UID} (the real uid, as C's getuid()) that has it.
     *
     * @throws ConnectionException {@code ENOENT} if none has it
     */
    static Path find(Path socketDir, String instance, String operation) {
        String file = instance + ".sock";
        if (socketDir != null) {
            return socketDir.resolve(file);
        }
        List<Path> dirs = new ArrayList<>();
        String env = System.getenv("PBUS_SOCKET_DIR");
        if (env != null && !env.isEmpty()) {
            dirs.add(Path.of(env));
        }
        dirs.add(Path.of("/run/parambus"));
        String xdg = System.getenv("XDG_RUNTIME_DIR");
        if (xdg != null && !xdg.isEmpty()) {
            dirs.add(Path.of(xdg, "parambus"));
        }
        dirs.add(Path.of("/tmp/parambus-" + processUids()[0]));
        for (Path d : dirs) {
            Path p = d.resolve(file);
            if (Files.exists(p)) {
                return p;
            }
        }
        throw new ConnectionException("ENOENT", operation + ": no socket " + file + " in " + dirs
                + " (is pbusd running?) (ENOENT)");
    }

    /**
     * The principals of the trusted owners: root, this process's effective user, and
     * {@code owners} (names or numeric uids; names nobody has are left out).
     */
    static List<UserPrincipal> trustedOwners(List<String> owners) {
        UserPrincipalLookupService lookup = FileSystems.getDefault().getUserPrincipalLookupService();
        List<UserPrincipal> trusted = new ArrayList<>();
        List<String> names = new ArrayList<>();
        names.add("0");
        names.add(Long.toString(processUids()[1]));
        names.addAll(owners);
        for (String n : names) {
            try {
                trusted.add(lookup.lookupPrincipalByName(n.trim()));
            } catch (UserPrincipalNotFoundException e) {
                // Nobody of that name: it trusts nobody.
            } catch (IOException e) {
                throw new ParambusException("EIO", "look up user '" + n + "': " + e.getMessage() + " (EIO)");
            }
        }
        return List.copyOf(trusted);
    }

    /**
     * A channel connected to {@code path} and served by a trusted owner, still in blocking
     * mode, nothing sent.
     *
     * @throws UntrustedServerException if another user serves it (the channel is closed)
     * @throws ConnectionException {@code ENOENT} (no socket), {@code ECONNREFUSED} (nobody
     *         listens), {@code EACCES}, {@code ENAMETOOLONG} or {@code ECONNRESET} for other I/O errors
     */
    static SocketChannel connect(Path path, List<UserPrincipal> trusted, String operation) {
        SocketChannel ch;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException e) {
            throw new ConnectionException("EMFILE", operation + ": socket: " + e.getMessage() + " (EMFILE)", e);
        }
        try {
            ch.connect(UnixDomainSocketAddress.of(path));
            UnixDomainPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
            if (!trusted.contains(peer.user())) {
                ch.close();
                throw new UntrustedServerException(operation, path.toString(), peer.user().getName());
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // Closing a socket that failed to connect: nothing to lose.
            }
            if (e instanceof ParambusException pe) {
                throw pe;
            }
            String msg = String.valueOf(e.getMessage());
            String errno = !Files.exists(path) ? "ENOENT"
                    : msg.contains("Connection refused") ? "ECONNREFUSED"
                    : msg.contains("Permission denied") ? "EACCES"
                    : msg.contains("too long") ? "ENAMETOOLONG" : "ECONNRESET";
            throw new ConnectionException(errno, operation + ": connect to " + path + ": " + msg + " (" + errno + ")", e);
        }
    }
}
