package io.parambus.client;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The requests of the parameter protocol, one {@link Pending} subclass each: how its
 * frame is written and its reply read. Package-private; see {@link PbusClient} for what
 * they are for.
 */
final class Requests {
    private Requests() {
    }

    static String names(Connection c, int[] indexes) {
        Schema s = c.client.schemaOrNull();
        return Arrays.stream(indexes).mapToObj(i -> s != null && i >= 0 && i < s.paramCount() ? s.params().get(i).name()
                : "#" + Integer.toUnsignedString(i)).collect(Collectors.joining(","));
    }

    /** HELLO and its HELLO_REPLY. */
    static final class Hello extends Pending {
        final long schemaHash;
        final byte[] name;
        Wire.HelloReply result;

        Hello(long schemaHash, byte[] name) {
            super(Wire.HELLO);
            this.schemaHash = schemaHash;
            this.name = name;
        }

        @Override
        long size() {
            return Wire.helloSize(name);
        }

        @Override
        void encode(ByteBuffer out, int id) {
            Wire.hello(out, id, Wire.VERSION, Wire.VERSION, schemaHash, name);
        }

        @Override
        void reply(Connection c, Wire.Body body) {
            result = Wire.helloReply(body);
        }

        @Override
        String operation(Connection c) {
            return "connect " + c.client.instance();
        }
    }

    /** A request of one str reply (SCHEMA_GET, STATS_GET), an empty one (UNSUBSCRIBE) or an echo (PING). */
    static final class Simple extends Pending {
        private final byte[] payload; // PING's data
        private final int argument;   // UNSUBSCRIBE's server id
        byte[] result;

        Simple(int type, byte[] payload, int argument) {
            super(type);
            this.payload = payload;
            this.argument = argument;
        }

        @Override
        long size() {
            return type == Wire.PING ? Wire.HEADER + payload.length : type == Wire.UNSUBSCRIBE ? Wire.HEADER + 4 : Wire.HEADER;
        }

        @Override
        void encode(ByteBuffer out, int id) {
            switch (type) {
                case Wire.PING -> Wire.bytes(out, Wire.PING, id, payload);
                case Wire.UNSUBSCRIBE -> Wire.u32(out, Wire.UNSUBSCRIBE, id, argument);
                default -> Wire.empty(out, type, id);
            }
        }

        @Override
        void reply(Connection c, Wire.Body body) {
            switch (type) {
                case Wire.PING -> result = body.bytes(body.left());
                case Wire.UNSUBSCRIBE -> {
                    if (!body.done()) {
                        throw new ProtocolErrorException("malformed UNSUBSCRIBED");
                    }
                }
                default -> {
                    result = body.strBytes();
                    if (!body.done()) {
                        throw new ProtocolErrorException("malformed " + Wire.typeName(type + 1));
                    }
                }
            }
        }

        @Override
        String operation(Connection c) {
            String instance = c.client.instance();
            return switch (type) {
                case Wire.SCHEMA_GET -> "connect " + instance + ": schema";
                case Wire.STATS_GET -> "stats " + instance;
                case Wire.PING -> "ping " + instance;
                case Wire.UNSUBSCRIBE -> "unsubscribe " + instance + " (server id " + Integer.toUnsignedString(argument) + ")";
                default -> Wire.typeName(type) + " " + instance;
            };
        }
    }

    /** GET of one parameter: the lean path of a single get (a 20-byte frame, one value record). */
    static final class GetOne extends Pending {
        final int index;
        Value result;

        GetOne(int index) {
            super(Wire.GET);
            this.index = index;
        }

        @Override
        long size() {
            return Wire.HEADER + 8;
        }

        @Override
        void encode(ByteBuffer out, int id) {
            Wire.getOne(out, id, index);
        }

        @Override
        void reply(Connection c, Wire.Body body) {
            Schema schema = c.client.schemaOrNull();
            if (body.u32() != 1) {
                throw new ProtocolErrorException("VALUES of another count than the 1 asked for");
            }
            Value v = Wire.value(body, schema);
            if (!body.done() || v.index() != index) {
                throw new ProtocolErrorException("VALUES that do not answer the GET");
            }
            result = v;
        }

        @Override
        String operation(Connection c) {
            return "get " + c.client.instance() + " " + names(c, new int[] {index});
        }
    }

    /** GET of several parameters, in the order asked. */
    static final class GetMany extends Pending {
        final int[] indexes;
        Value[] result;

        GetMany(int[] indexes) {
            super(Wire.GET);
            this.indexes = indexes;
        }

        @Override
        long size() {
            return Wire.getSize(indexes.length);
        }

        @Override
        void encode(ByteBuffer out, int id) {
            Wire.get(out, id, indexes);
        }

        @Override
        void reply(Connection c, Wire.Body body) {
            Schema schema = c.client.schemaOrNull();
            if (body.u32() != indexes.length) {
                throw new ProtocolErrorException("VALUES of another count than the " + indexes.length + " asked for");
            }
            Value[] values = new Value[indexes.length];
            for (int k = 0; k < indexes.length; k++) {
                values[k] = Wire.value(body, schema);
                if (values[k].index() != indexes[k]) {
                    throw new ProtocolErrorException("VALUES that do not answer the GET");
                }
            }
            if (!body.done()) {
                throw new ProtocolErrorException("malformed VALUES: bytes left over");
            }
            result = values;
        }

        @Override
        String operation(Connection c) {
            return "get " + c.client.instance() + " " + names(c, indexes);
        }
    }

    /** SET of a batch. */
    static final class Set extends Pending {
        final int[] indexes;
        final byte[][] values;
        Wire.SetReply result;

        Set(int[] indexes, byte[][] values) {
            super(Wire.SET);
            this.indexes = indexes;
            this.values = values;
        }

        @Override
        long size() {
            return Wire.setSize(values);
        }

        @Override
        void encode(ByteBuffer out, int id) {
            Wire.set(out, id, indexes, values);
        }

        @Override
        void reply(Connection c, Wire.Body body) {
            Wire.SetReply r = Wire.setReply(body);
            if (r.results().length != indexes.length) {
                throw new ProtocolErrorException("SET_REPLY of " + r.results().length + " writes to a SET of " + indexes.length);
            }
            result = r;
        }

        @Override
        String operation(Connection c) {
            return "set " + c.client.instance() + " " + names(c, indexes);
        }
    }

    /** SUBSCRIBE, made by the caller or renewed after a reconnect. */
    static final class Subscribe extends Pending {
        final Subscription subscription;
        final boolean renewal;
        int serverId;

        Subscribe(Subscription subscription, boolean renewal) {
            super(Wire.SUBSCRIBE);
            this.subscription = subscription;
            this.renewal = renewal;
        }

        @Override
        long size() {
            return Wire.subscribeSize(subscription.indexesRef().length);
        }

        @Override
        void encode(ByteBuffer out, int id) {
            SubscribeOptions o = subscription.options();
            Wire.subscribe(out, id, o.minIntervalMicros(), o.deadband(), subscription.indexesRef());
        }

        /** SUBSCRIBED: the subscription takes its server id now, before the NOTIFY that follows it is read. */
        @Override
        void reply(Connection c, Wire.Body body) {
            int id = body.u32();
            if (!body.done() || id == 0) {
                throw new ProtocolErrorException("malformed SUBSCRIBED");
            }
            serverId = id;
            c.client.subscribed(c, subscription, id, renewal);
        }

        @Override
        void refused(Connection c, Wire.ErrorReply e) {
            super.refused(c, e);
            if (renewal) {
                c.client.resubscribeRefused(subscription, error);
            }
        }

        /** A SUBSCRIBE whose caller gave up: undone at once if the server took it. */
        @Override
        void lateReply(Connection c, int replyType, Wire.Body body) {
            if (replyType == Wire.SUBSCRIBED) {
                int id = body.u32();
                if (body.done() && id != 0) {
                    c.client.forgetLater(c, id);
                }
            }
        }

        @Override
        String operation(Connection c) {
            return (renewal ? "resubscribe " : "subscribe ") + c.client.instance() + " " + names(c, subscription.indexesRef());
        }
    }
}
