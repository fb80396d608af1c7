/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * A simulation's research output beside wb-export's tables (issue 25):
 * the fills and queue positions a strategy's run wrote as CSV
 * (examples/join_bid --fills/--queue, wirebook.simulate()'s write_fills
 * and write_queue: docs/simulate.md) read back and written as two more
 * tables of the export, fills and queue, by the same table writer (CSV or
 * HDF5, table.h). The CSV is read whole before the export starts, so that
 * a bad file is said at once.
 */
#ifndef WIREBOOK_EXPORT_SIMOUT_H
#define WIREBOOK_EXPORT_SIMOUT_H

#include <stddef.h>

#include "export/table.h"

#define SIM_TABLES 2	/* fills, queue */

struct sim_out;

/*
 * Read the fills CSV and the queue CSV (either path NULL: no such table):
 * a header naming exactly the table's columns, in order, then a row a
 * line ('#' lines skipped). NULL with a sentence in err.
 */
struct sim_out *sim_out_load(const char *fills_csv, const char *queue_csv, char *err, size_t errlen);
/* Define the tables loaded into ts (room for SIM_TABLES): how many. */
unsigned sim_out_define(const struct sim_out *s, struct table *ts);
/* Their rows, into the tables sim_out_define made (opened since). */
void sim_out_write(const struct sim_out *s, struct table *ts);
void sim_out_free(struct sim_out *s);

#endif /* WIREBOOK_EXPORT_SIMOUT_H */
