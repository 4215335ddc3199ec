//go:build !purego

#include "textflag.h"

// AES-NI for FF1's narrow rounds (ff1_amd64.go). A round key, a state and
// a block are 16 bytes in memory order (FIPS 197); an XMM register holds
// bytes 0-7 in its low quadword, little-endian, so a big-endian word of
// the block is BSWAPQ of a quadword.

// AESROUND runs one AES round on X0 with the round key at off(BX),
// loaded into X1 with MOVUPS: SSE's memory operands must be aligned to 16
// bytes and Go aligns the keys to 8. AESROUNDS2 runs two.
#define AESROUND(off) MOVUPS off(BX), X1; AESENC X1, X0
#define AESROUNDS2(off) AESROUND(off); AESROUND(off+16)

// AESROUNDS runs AES rounds 1 to nr on X0 with the round keys from (BX) on
// (rk1 first); DX holds nr (10, 12 or 14). It advances BX and uses X1.
#define AESROUNDS                      \
	CMPQ       DX, $12              \
	JB         aes128               \
	JE         aes192               \
	AESROUNDS2(0)                   \
	ADDQ       $32, BX              \
aes192:                                \
	AESROUNDS2(0)                   \
	ADDQ       $32, BX              \
aes128:                                \
	AESROUNDS2(0)                   \
	AESROUNDS2(32)                  \
	AESROUNDS2(64)                  \
	AESROUNDS2(96)                  \
	AESROUND(128)                   \
	MOVUPS     144(BX), X1          \
	AESENCLAST X1, X0

// PRF sets R8 to y mod 2^64 of the round whose input block is (SI) XOR
// the half in R8 as the block's last 8 bytes, big-endian: (SI) is the
// round's precomputed state already XORed with round key 0, AX points at
// round key 1, CX holds s = 64 - yshift (0 or 32). y = R>>yshift, and its
// low word is R0<<s | R1>>(64-s) (SHLD), R0 and R1 the output block's
// big-endian words.
#define PRF                     \
	BSWAPQ R8               \
	MOVQ   R8, X0           \
	PSLLDQ $8, X0           \
	MOVUPS (SI), X1         \
	PXOR   X1, X0           \
	MOVQ   AX, BX           \
	AESROUNDS               \
	MOVQ   X0, R8           \
	PEXTRQ $1, X0, R9       \
	BSWAPQ R8               \
	BSWAPQ R9               \
	SHLQ   CX, R9, R8

// FF1ARGS loads the arguments of ff1Encrypt64AESNI and ff1Decrypt64AESNI
// but the masks: AX = round key 1, DX = nr, SI = qk, R10 = A, R11 = B,
// CX = s, DI = 10 rounds to run.
#define FF1ARGS                        \
	MOVQ rk+0(FP), AX               \
	ADDQ $16, AX                    \
	MOVQ nr+8(FP), DX               \
	MOVQ qk+16(FP), SI              \
	MOVQ a+24(FP), R10              \
	MOVQ b+32(FP), R11              \
	MOVQ s+56(FP), CX               \
	MOVQ $10, DI

// func ff1Encrypt64AESNI(rk *[15][16]byte, nr int, qk *[10][16]byte, a, b, mu, mv uint64, s uint) (uint64, uint64)
TEXT ·ff1Encrypt64AESNI(SB), NOSPLIT, $0-80
	FF1ARGS
	MOVQ mu+40(FP), R12
	MOVQ mv+48(FP), R13

enc:
	MOVQ  R11, R8
	PRF
	ADDQ  R10, R8 // (A + y) mod 2^(k*m)
	ANDQ  R12, R8
	MOVQ  R11, R10
	MOVQ  R8, R11
	XCHGQ R12, R13 // m = u in even rounds, v in odd ones
	ADDQ  $16, SI
	DECQ  DI
	JNZ   enc
	MOVQ  R10, ret+64(FP)
	MOVQ  R11, ret1+72(FP)
	RET

// func ff1Decrypt64AESNI(rk *[15][16]byte, nr int, qk *[10][16]byte, a, b, mu, mv uint64, s uint) (uint64, uint64)
TEXT ·ff1Decrypt64AESNI(SB), NOSPLIT, $0-80
	FF1ARGS
	ADDQ $144, SI       // round 9 first
	MOVQ mv+48(FP), R12 // round 9 is odd
	MOVQ mu+40(FP), R13

dec:
	MOVQ  R10, R8
	PRF
	MOVQ  R11, R9 // (B - y) mod 2^(k*m)
	SUBQ  R8, R9
	ANDQ  R12, R9
	MOVQ  R10, R11
	MOVQ  R9, R10
	XCHGQ R12, R13
	SUBQ  $16, SI
	DECQ  DI
	JNZ   dec
	MOVQ  R10, ret+64(FP)
	MOVQ  R11, ret1+72(FP)
	RET

// func aesBlocksAESNI(rk *[15][16]byte, nr int, n int, p *[16]byte)
TEXT ·aesBlocksAESNI(SB), NOSPLIT, $0-32
	MOVQ   rk+0(FP), AX
	MOVQ   nr+8(FP), DX
	MOVQ   n+16(FP), DI
	MOVQ   p+24(FP), SI
	MOVUPS (SI), X0
	TESTQ  DI, DI
	JZ     done

blocks:
	MOVUPS (AX), X1
	PXOR   X1, X0
	LEAQ   16(AX), BX
	AESROUNDS
	DECQ   DI
	JNZ    blocks

done:
	MOVUPS X0, (SI)
	RET

// func subWordAESNI(w uint32) uint32
TEXT ·subWordAESNI(SB), NOSPLIT, $0-12
	MOVL       w+0(FP), AX
	MOVL       AX, X0
	PSHUFD     $0, X0, X0 // the word in every column: ShiftRows moves nothing
	PXOR       X1, X1
	AESENCLAST X1, X0 // SubBytes of each byte, MixColumns skipped, zero key
	MOVL       X0, AX
	MOVL       AX, ret+8(FP)
	RET
