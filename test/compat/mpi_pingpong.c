/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The droce authors
 */
/*
 * Two MPI ranks: a ping-pong at each size given, every message's bytes checked on arrival,
 * then an allreduce (sum) of a vector whose result is checked. Run by test/compat/ucx_test.py
 * mpi with Open MPI over UCX, each rank a droce process; prints one line a size and
 * "allreduce: ... checked". Any mismatch: MPI_Abort, exit non-zero.
 *
 * usage: mpi_pingpong ITERS SIZE...
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WARMUP 100
#define VEC 4096

/* Byte @j of the message rank @from sends in round @i. */
static unsigned char pattern(int i, size_t j, int from)
{
	return (unsigned char)(i * 131 + j * 7 + from * 61);
}

static void fill(unsigned char *b, size_t n, int i, int from)
{
	for (size_t j = 0; j < n; j++)
		b[j] = pattern(i, j, from);
}

static void check(const unsigned char *b, size_t n, int i, int from)
{
	for (size_t j = 0; j < n; j++) {
		if (b[j] != pattern(i, j, from)) {
			fprintf(stderr, "mpi_pingpong: round %d, %zu bytes from rank %d: byte %zu is "
				"%u, want %u\n", i, n, from, j, b[j], pattern(i, j, from));
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
	}
}

/* @iters round trips of @n bytes after WARMUP ones; rank 0 prints microseconds per trip. */
static void pingpong(int rank, int iters, size_t n)
{
	unsigned char *b = malloc(n ? n : 1);
	int peer = 1 - rank, i;
	double t0 = 0;

	if (b == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < WARMUP + iters; i++) {
		if (i == WARMUP)
			t0 = MPI_Wtime();
		if (rank == 0) {
			fill(b, n, i, 0);
			MPI_Send(b, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
			MPI_Recv(b, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			check(b, n, i, 1);
		} else {
			MPI_Recv(b, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			check(b, n, i, 0);
			fill(b, n, i, 1);
			MPI_Send(b, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("pingpong %zu B: %d round trips, %.2f us per round trip, data checked\n", n,
		       iters, (MPI_Wtime() - t0) * 1e6 / iters);
	free(b);
}

static void allreduce(int rank, int ranks)
{
	static int64_t in[VEC], out[VEC];
	int k;

	for (k = 0; k < VEC; k++)
		in[k] = (int64_t)rank * 1000003 + k;
	MPI_Allreduce(in, out, VEC, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (k = 0; k < VEC; k++) {
		int64_t want = (int64_t)ranks * (ranks - 1) / 2 * 1000003 + (int64_t)ranks * k;

		if (out[k] != want) {
			fprintf(stderr, "mpi_pingpong: allreduce element %d is %lld, want %lld\n", k,
				(long long)out[k], (long long)want);
			MPI_Abort(MPI_COMM_WORLD, 4);
		}
	}
	if (rank == 0)
		printf("allreduce: %d x int64 sum over %d ranks, checked\n", VEC, ranks);
}

int main(int argc, char **argv)
{
	int rank, ranks, iters, a;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (argc < 3 || ranks != 2 || (iters = atoi(argv[1])) <= 0) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_pingpong ITERS SIZE...\n");
		MPI_Finalize();
		return 2;
	}
	for (a = 2; a < argc; a++)
		pingpong(rank, iters, (size_t)strtoul(argv[a], NULL, 0));
	allreduce(rank, ranks);
	MPI_Finalize();
	return 0;
}
