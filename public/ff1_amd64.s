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

// The narrow rounds keep A, B, the masks and the shuffles in XMM
// registers, each half as a little-endian quadword in its low lane (the
// high lane zero), so that a round's chain from one AES block to the next
// is PSHUFB, PADDQ (PSUBQ), PAND, PSHUFB and PXOR:
//
//	X2 = A, X3 = B, X4 = this round's mask, X5 the next one's,
//	X6 = xshuf: a half to the block's last 8 bytes, big-endian,
//	X7 = yshuf: the AES output block to y mod 2^64 (y = R >> yshift),
//	SI = this round's state q[i] XOR round key 0, AX = round key 1,
//	DX = nr, DI = rounds left; X0 and X1 are scratch.

// FF1ARGS loads the arguments of ff1Encrypt64AESNI and ff1Decrypt64AESNI
// but the masks.
#define FF1ARGS                        \
	MOVQ   rk+0(FP), AX             \
	ADDQ   $16, AX                  \
	MOVQ   nr+8(FP), DX             \
	MOVQ   qk+16(FP), SI            \
	MOVQ   shuf+24(FP), R8          \
	MOVUPS (R8), X6                 \
	MOVUPS 16(R8), X7               \
	MOVQ   a+32(FP), R8             \
	MOVQ   R8, X2                   \
	MOVQ   b+40(FP), R8             \
	MOVQ   R8, X3                   \
	MOVQ   $10, DI

// PRF sets X0 to y mod 2^64 (its low lane; the high lane zero) of the
// round whose half is in register x.
#define PRF(x)                         \
	MOVOU  x, X0                    \
	PSHUFB X6, X0                   \
	MOVUPS (SI), X1                 \
	PXOR   X1, X0                   \
	MOVQ   AX, BX                   \
	AESROUNDS                       \
	PSHUFB X7, X0

// SWAPMASKS swaps X4 and X5 through X1: m = u in even rounds, v in odd
// ones.
#define SWAPMASKS MOVOU X4, X1; MOVOU X5, X4; MOVOU X1, X5

// func ff1Encrypt64AESNI(rk *[15][16]byte, nr int, qk *[10][16]byte, shuf *[2][16]byte, a, b, mu, mv uint64) (uint64, uint64)
TEXT ·ff1Encrypt64AESNI(SB), NOSPLIT, $0-80
	FF1ARGS
	MOVQ mu+48(FP), R8
	MOVQ R8, X4
	MOVQ mv+56(FP), R8
	MOVQ R8, X5

enc:
	PRF(X3)
	PADDQ X2, X0 // C = (A + y) mod 2^(k*m)
	PAND  X4, X0
	MOVOU X3, X2 // A = B
	MOVOU X0, X3 // B = C
	SWAPMASKS
	ADDQ  $16, SI
	DECQ  DI
	JNZ   enc
	MOVQ  X2, ret+64(FP)
	MOVQ  X3, ret1+72(FP)
	RET

// func ff1Decrypt64AESNI(rk *[15][16]byte, nr int, qk *[10][16]byte, shuf *[2][16]byte, a, b, mu, mv uint64) (uint64, uint64)
TEXT ·ff1Decrypt64AESNI(SB), NOSPLIT, $0-80
	FF1ARGS
	ADDQ $144, SI      // round 9 first
	MOVQ mv+56(FP), R8 // round 9 is odd
	MOVQ R8, X4
	MOVQ mu+48(FP), R8
	MOVQ R8, X5

dec:
	PRF(X2)
	MOVOU X3, X1 // C = (B - y) mod 2^(k*m)
	PSUBQ X0, X1
	PAND  X4, X1
	MOVOU X2, X3 // B = A
	MOVOU X1, X2 // A = C
	SWAPMASKS
	SUBQ  $16, SI
	DECQ  DI
	JNZ   dec
	MOVQ  X2, ret+64(FP)
	MOVQ  X3, ret1+72(FP)
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

// func cpuid1ECX() uint32: ECX of CPUID leaf 1 (bit 9 SSSE3, bit 25 AES).
TEXT ·cpuid1ECX(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL CX, ret+0(FP)
	RET
