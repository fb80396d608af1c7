// book_top [--book NAME] [SYMBOL...]: one look at a live book from C++.
// Lists the book's symbols (all of them, or those named), then each one's
// top of book and NBBO. The wirebook headers are C with extern "C"; no
// wrapper is needed. Build against an installed library:
//   c++ -std=c++17 book_top.cpp $(pkg-config --cflags --libs wirebook) -o book_top
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "wirebook/book.h"

namespace {

// A price in units of 1e-8 dollars as dollars with four decimals.
std::string dollars(int64_t p)
{
	char buf[32];
	int64_t whole = p / static_cast<int64_t>(WB_PRICE_SCALE);
	int64_t frac = (p < 0 ? -p : p) % static_cast<int64_t>(WB_PRICE_SCALE) / 10000;

	std::snprintf(buf, sizeof(buf), "%s%" PRId64 ".%04" PRId64,
		      p < 0 && whole == 0 ? "-" : "", whole, frac);
	return buf;
}

// The book's handle, closed however main returns.
struct book_handle {
	wb_book *b = nullptr;
	~book_handle() { if (b) wb_close(b); }
};

int usage(std::FILE *to, int rc)
{
	std::fprintf(to, "usage: book_top [--book NAME] [SYMBOL...]\n");
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	const char *name = nullptr;
	std::vector<std::string> wanted;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--help"))
			return usage(stdout, 0);
		if (!std::strcmp(argv[i], "--book") && i + 1 < argc)
			name = argv[++i];
		else if (argv[i][0] == '-')
			return usage(stderr, 2);
		else
			wanted.emplace_back(argv[i]);
	}

	book_handle h;
	int err = 0;
	h.b = wb_open(name, &err);
	if (!h.b) {
		std::fprintf(stderr, "book_top: %s: %s\n", name ? name : WB_SHM_DEFAULT_NAME,
			     wb_strerror(err));
		return 1;
	}

	// Symbol indices run 1 .. wb_symbol_count() - 1.
	std::vector<std::pair<int, std::string>> syms;
	if (wanted.empty()) {
		for (int s = 1; s < wb_symbol_count(h.b); s++) {
			char t[9];
			if (wb_symbol(h.b, s, t) == 0)
				syms.emplace_back(s, t);
		}
	} else {
		for (const auto &t : wanted) {
			int s = wb_find(h.b, t.c_str());
			if (s < 0) {
				std::fprintf(stderr, "book_top: %s: %s\n", t.c_str(), wb_strerror(s));
				return 1;
			}
			syms.emplace_back(s, t);
		}
	}
	std::printf("symbols %zu\n", syms.size());

	int failed = 0;
	for (const auto &s : syms) {
		// wb_top and wb_nbbo name both a struct and a function: say struct.
		struct wb_top top;
		struct wb_nbbo nbbo;
		int rc = wb_top(h.b, s.first, &top);
		if (rc == 0)
			rc = wb_nbbo(h.b, s.first, &nbbo);
		if (rc) {
			std::fprintf(stderr, "book_top: %s: %s\n", s.second.c_str(), wb_strerror(rc));
			failed++;
			continue;
		}
		std::printf("%-8s top %" PRIu64 " @ %s / %" PRIu64 " @ %s  nbbo %s x %s venues %s/%s"
			    " updates %" PRIu64 "\n",
			    s.second.c_str(), top.bid_qty, dollars(top.bid_price).c_str(),
			    top.ask_qty, dollars(top.ask_price).c_str(),
			    dollars(nbbo.bid_price).c_str(), dollars(nbbo.ask_price).c_str(),
			    nbbo.bid_venues ? wb_venue_name(__builtin_ctz(nbbo.bid_venues)) : "-",
			    nbbo.ask_venues ? wb_venue_name(__builtin_ctz(nbbo.ask_venues)) : "-",
			    top.updates);
	}
	return failed ? 1 : 0;
}
