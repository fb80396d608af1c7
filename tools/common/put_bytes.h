/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/* Compat until the recovery files include wire/bytes.h themselves: remove at their merge. */
#ifndef WIREBOOK_TOOLS_PUT_BYTES_H
#define WIREBOOK_TOOLS_PUT_BYTES_H

#include "wire/bytes.h"

#define put_be16 wire_put_be16
#define put_be32 wire_put_be32
#define put_be48 wire_put_be48
#define put_be64 wire_put_be64
#define put_le16 wire_put_le16
#define put_le32 wire_put_le32
#define put_le64 wire_put_le64

#endif /* WIREBOOK_TOOLS_PUT_BYTES_H */
