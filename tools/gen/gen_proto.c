/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* The generator table, built from the protocol table (see gen_proto.h). */
#include "gen/gen_proto.h"

static const struct gen_proto *const gen_protos[FEED_PROTO_COUNT] = {
#define GEN_PROTO_ROW(id, stem) [FEED_PROTO_##id] = &gen_proto_##stem,
	FEED_PROTOCOLS(GEN_PROTO_ROW)
#undef GEN_PROTO_ROW
};

const struct gen_proto *gen_proto_get(int protocol)
{
	if (protocol <= FEED_PROTO_NONE || protocol >= FEED_PROTO_COUNT)
		return NULL;
	return gen_protos[protocol];
}
