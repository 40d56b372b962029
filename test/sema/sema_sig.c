/* sema_sig.c: the sema entry points a host uses without building IR:
 * signature and -D parsing, kernel names and signatures, autotune configs
 * (with reset_to_zero and restore_value) and heuristics read from decorators, and equal-to-1 specialisation;
 * tuple entries of signatures, parsed and printed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "driver/driver.h"

#include "check.h"

static const char *const source =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=4),\n"
    "                          triton.Config({'BLOCK': 256}, num_warps=8, num_stages=2)],\n"
    "                 key=['n'], reset_to_zero=['p'], restore_value=('p', 'n'))\n"
    "@triton.heuristics({'EVEN': lambda args: args['n'] % args['BLOCK'] == 0})\n"
    "@triton.jit\n"
    "def k(p, n, stride, BLOCK: tl.constexpr, EVEN: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK) * stride\n"
    "    tl.store(p + offs, 1.0)\n"
    "\n"
    "@triton.jit\n"
    "def helper(x):\n"
    "    return x\n";

static void test_signature(void)
{
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, NULL);
    ArgSpec *args;
    int n;
    CHECK(sema_parse_signature("*fp32:16, *fp16,i32:1,i64:16,fp32", &a, &d, &args, &n));
    CHECK(n == 5);
    CHECK(args[0].type.dt == DT_PTR && args[0].type.elem == DT_F32 && args[0].divisibility == 16);
    CHECK(args[1].type.elem == DT_F16 && args[1].divisibility == 1);
    CHECK(args[2].type.dt == DT_I32 && args[2].equal_to_1 && args[2].divisibility == 1);
    CHECK(args[3].type.dt == DT_I64 && args[3].divisibility == 16 && !args[3].equal_to_1);
    CHECK(args[4].type.dt == DT_F32);
    CHECK(d.errors == 0);
    CHECK(!sema_parse_signature("*fp32,float7", &a, &d, &args, &n));
    CHECK(!sema_parse_signature("fp32:1", &a, &d, &args, &n));
    CHECK(d.errors == 2);
    diag_free(&d);
    arena_free(&a);

    ConstValue v;
    const char *why;
    CHECK(sema_parse_const("1_024", &v, &why) && v.kind == CV_INT && v.i == 1024);
    CHECK(sema_parse_const("0x10", &v, &why) && v.kind == CV_INT && v.i == 16);
    CHECK(sema_parse_const("1e-5", &v, &why) && v.kind == CV_FLOAT && v.f == 1e-5);
    CHECK(sema_parse_const("True", &v, &why) && v.kind == CV_BOOL && v.i == 1);
    CHECK(sema_parse_const("tl.float16", &v, &why) && v.kind == CV_DTYPE && v.type.dt == DT_F16);
    CHECK(sema_parse_const("bf16", &v, &why) && v.kind == CV_DTYPE && v.type.dt == DT_BF16);
    CHECK(sema_parse_const("'ieee'", &v, &why) && v.kind == CV_STR && !strcmp(v.s, "ieee"));
    tk_xfree((void *)v.s);
    CHECK(!sema_parse_const("12abc", &v, &why) && why == NULL);
    /* numbers that do not fit are refused, not clamped */
    CHECK(sema_parse_const("9223372036854775807", &v, &why) && v.i == INT64_MAX);
    CHECK(sema_parse_const("-9223372036854775808", &v, &why) && v.i == INT64_MIN);
    CHECK(!sema_parse_const("9223372036854775808", &v, &why) && why &&
          !strcmp(why, "value does not fit in int64"));
    CHECK(!sema_parse_const("-9_223_372_036_854_775_809", &v, &why) && why);
    CHECK(!sema_parse_const("0x1_0000_0000_0000_0000", &v, &why) && why);
    CHECK(sema_parse_const("1e308", &v, &why) && v.kind == CV_FLOAT && v.f == 1e308);
    CHECK(!sema_parse_const("1e309", &v, &why) && why &&
          !strcmp(why, "value does not fit in float64"));
    CHECK(!sema_parse_const("-1e999", &v, &why) && why);
    CHECK(sema_parse_const("inf", &v, &why) && v.kind == CV_FLOAT && v.f > 1e308);
    CHECK(sema_parse_const("-inf", &v, &why) && v.kind == CV_FLOAT && v.f < -1e308);
    CHECK(sema_parse_const("nan", &v, &why) && v.kind == CV_FLOAT && v.f != v.f);
    CHECK(sema_parse_const("1e-400", &v, &why) && v.kind == CV_FLOAT && v.f == 0);
    /* tuples keep their items' text, spaced one way; names are functions */
    struct {
        const char *text, *canon;
    } tuples[] = {
        {"(1,2.5)", "(1, 2.5)"},
        {" ( 1 ,( 'a,(b' , None) ,tl.float16,) ", "(1, ('a,(b', None), tl.float16)"},
        {"(1,)", "(1,)"},
        {"()", "()"},
        {"((),(_relu,))", "((), (_relu,))"},
    };
    for (int i = 0; i < TK_ARRAY_LEN(tuples); i++) {
        CHECK(sema_parse_const(tuples[i].text, &v, &why) && v.kind == CV_TUPLE &&
              !strcmp(v.s, tuples[i].canon));
        if (v.kind == CV_TUPLE)
            tk_xfree((void *)v.s);
    }
    CHECK(sema_parse_const("(7)", &v, &why) && v.kind == CV_INT && v.i == 7);
    CHECK(!sema_parse_const("(1,,2)", &v, &why) && why == NULL);
    CHECK(!sema_parse_const("(1, 'a)", &v, &why) && why == NULL);
    CHECK(!sema_parse_const("(1, 2", &v, &why) && why == NULL);
    CHECK(!sema_parse_const("(1, 1e999)", &v, &why) && why);
    CHECK(!sema_parse_const("(1, 2))(", &v, &why));
    CHECK(sema_parse_const("_relu", &v, &why) && v.kind == CV_FUNC && !strcmp(v.s, "_relu"));
    tk_xfree((void *)v.s);
    CHECK(!sema_parse_const("a.b", &v, &why) && why == NULL);
}

/* Tuple entries parse into trees and print back as written; malformed
 * ones are refused, each error counted once. */
static void test_tuple_signature(void)
{
    Arena a;
    arena_init(&a);
    Diag d;
    diag_init(&d, NULL);
    ArgSpec *args;
    int n;
    const char *text = "(*fp32:16,*fp16),((i32:1,None),(fp32,)),(),i64:16";
    CHECK(sema_parse_signature(text, &a, &d, &args, &n) && n == 4 && d.errors == 0);
    CHECK(args[0].is_tuple && args[0].nitems == 2 && args[0].items[1].type.elem == DT_F16);
    CHECK(args[1].is_tuple && args[1].items[0].items[0].equal_to_1);
    CHECK(args[1].items[0].items[1].is_const && args[1].items[0].items[1].value.kind == CV_NONE);
    CHECK(args[1].items[1].nitems == 1 && args[1].items[1].items[0].type.dt == DT_F32);
    CHECK(args[2].is_tuple && args[2].nitems == 0 && !args[3].is_tuple);
    const char *want[] = {"(*fp32:16,*fp16)", "((i32:1,None),(fp32,))", "()", "i64:16"};
    for (int i = 0; i < n && i < 4; i++)
        CHECK(strcmp(sema_sig_entry(&args[i], &a), want[i]) == 0);
    CHECK(sema_parse_signature(" ( *fp32 , 4 ) ", &a, &d, &args, &n) && n == 1);
    CHECK(args[0].items[1].is_const && args[0].items[1].value.i == 4);
    CHECK(strcmp(sema_sig_entry(&args[0], &a), "(*fp32,4)") == 0);
    CHECK(sema_parse_signature("((((((((i32,),),),),),),),)", &a, &d, &args, &n) && n == 1);
    const char *bad[] = {"(*fp32",
                         "*fp32)",
                         "(*fp32,,i32)",
                         "(i32)x",
                         "None",
                         "(fp99,)",
                         "(tensordesc<fp16[16]>,)",
                         "((i32,)",
                         "(((((((((i32,),),),),),),),),)"};
    for (int i = 0; i < TK_ARRAY_LEN(bad); i++) {
        int before = d.errors;
        CHECK(!sema_parse_signature(bad[i], &a, &d, &args, &n));
        CHECK(d.errors == before + 1);
    }
    diag_free(&d);
    arena_free(&a);
}

static void test_module(void)
{
    Compilation c;
    CHECK(comp_init(&c, "sig.tk", source, strlen(source)));
    CHECK(comp_parse(&c));
    const char **names;
    int n = sema_kernel_names(c.module, &names, &c.arena);
    CHECK(n == 2 && !strcmp(names[0], "k") && !strcmp(names[1], "helper"));

    KernelSig sig;
    CHECK(sema_kernel_sig(c.module, "k", &c.arena, &sig));
    CHECK(sig.nparams == 5);
    CHECK(!sig.is_constexpr[0] && sig.is_constexpr[3] && sig.is_constexpr[4]);
    CHECK(sig.nconfigs == 2);
    if (sig.nconfigs == 2) {
        CHECK(sig.configs[0].ndefines == 1 && !strcmp(sig.configs[0].defines[0].name, "BLOCK"));
        CHECK(sig.configs[0].defines[0].value.i == 128 && sig.configs[0].num_warps == 4);
        CHECK(sig.configs[0].num_stages == 0);
        CHECK(sig.configs[1].defines[0].value.i == 256 && sig.configs[1].num_warps == 8);
        CHECK(sig.configs[1].num_stages == 2);
        CHECK(sig.nreset_to_zero == 1 && !strcmp(sig.reset_to_zero[0], "p"));
        CHECK(sig.nrestore_value == 2 && !strcmp(sig.restore_value[1], "n"));
    }
    CHECK(sig.ntune_keys == 1 && !strcmp(sig.tune_keys[0], "n"));
    CHECK(sig.nheuristics == 1 && !strcmp(sig.heuristic_names[0], "EVEN"));
    if (sig.nheuristics == 1) {
        const char *an[2] = {"n", "BLOCK"};
        ConstValue av[2] = {{.kind = CV_INT, .i = 512}, {.kind = CV_INT, .i = 128}};
        ConstValue out;
        Diag d;
        diag_init(&d, &c.src);
        CHECK(sema_eval_heuristic(c.module, sig.heuristic_fns[0], an, av, 2, &c.arena, &d, &out));
        CHECK(out.kind == CV_BOOL && out.i == 1);
        av[0].i = 500;
        CHECK(sema_eval_heuristic(c.module, sig.heuristic_fns[0], an, av, 2, &c.arena, &d, &out));
        CHECK(out.kind == CV_BOOL && out.i == 0);
        CHECK(!sema_eval_heuristic(c.module, sig.heuristic_fns[0], an, av, 1, &c.arena, &d, &out));
        CHECK(d.errors == 1 && strstr(d.text.data, "no launch argument named string 'BLOCK'"));
        diag_free(&d);
    }

    /* stride == 1 specialises into the constant 1: the parameter stays but
     * the body never reads it */
    ArgSpec args[3] = {{.type = type_ptr(DT_F32), .divisibility = 16},
                       {.type = type_scalar(DT_I32), .divisibility = 1},
                       {.type = type_scalar(DT_I32), .divisibility = 1, .equal_to_1 = true}};
    SpecDefine defs[2] = {{"BLOCK", {.kind = CV_INT, .i = 64}, {0}},
                          {"EVEN", {.kind = CV_BOOL, .i = 1}, {0}}};
    SpecRequest req = {"k", defs, 2, args, 3, 4, 3, NULL, false};
    Arena ir;
    arena_init(&ir);
    IrFunc *f = sema_specialize(c.module, &c.src, &req, &ir, &c.diag);
    CHECK(f != NULL);
    if (f) {
        CHECK(f->nparams == 3 && f->params[0].divisibility == 16);
        StrBuf sb;
        sb_init(&sb);
        ir_print(&sb, f);
        const char *body = sb.data ? strchr(sb.data, '\n') : NULL;
        CHECK(body && !strstr(body, "%2") && strstr(body, "const 1 : <64xi32>"));
        sb_free(&sb);
    }
    if (c.diag.errors)
        fprintf(stderr, "%s", c.diag.text.data);
    arena_free(&ir);
    comp_free(&c);
}

/* Bad module constants and lambdas that build tensors are errors, not crashes. */
static void test_bad_module(void)
{
    static const char *const bad = "import triton\n"
                                   "import triton.language as tl\n"
                                   "X = tl.arange(0, 4)\n"
                                   "@triton.heuristics({'B': lambda args: tl.arange(0, 4)})\n"
                                   "@triton.jit\n"
                                   "def k(p, B: tl.constexpr):\n"
                                   "    pass\n";
    Compilation c;
    CHECK(comp_init(&c, "bad.tk", bad, strlen(bad)));
    CHECK(comp_parse(&c));
    KernelSig sig;
    CHECK(sema_kernel_sig(c.module, "k", &c.arena, &sig));
    CHECK(sig.nheuristics == 1);
    if (sig.nheuristics == 1) {
        ConstValue out;
        Diag d;
        diag_init(&d, &c.src);
        CHECK(!sema_eval_heuristic(c.module, sig.heuristic_fns[0], NULL, NULL, 0, &c.arena, &d,
                                   &out));
        CHECK(d.errors >= 1);
        diag_free(&d);
    }
    comp_free(&c);
}

/* A heuristic that names a host function is read as host code: its entry
 * says which function, and evaluating it is an error naming it. Entries of
 * two decorators add up, in source order. */
static void test_host_heuristic(void)
{
    static const char *const src = "import triton\n"
                                   "import triton.language as tl\n"
                                   "def heur_b(args):\n"
                                   "    return 16\n"
                                   "@triton.heuristics({'D': lambda a: 3})\n"
                                   "@triton.heuristics({'B': heur_b, 'C': lambda a: 2})\n"
                                   "@triton.jit\n"
                                   "def k(p, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):\n"
                                   "    pass\n";
    Compilation c;
    CHECK(comp_init(&c, "host.tk", src, strlen(src)));
    CHECK(comp_parse(&c));
    KernelSig sig;
    CHECK(sema_kernel_sig(c.module, "k", &c.arena, &sig));
    CHECK(sig.nheuristics == 3 && !sig.heuristics_from_host);
    const char *names[] = {"D", "B", "C"};
    bool ok = sig.nheuristics == 3;
    for (int i = 0; ok && i < 3; i++)
        ok = sig.heuristic_names[i] && !strcmp(sig.heuristic_names[i], names[i]);
    CHECK(ok);
    if (!ok) {
        comp_free(&c);
        return;
    }
    CHECK(!sig.heuristic_hosts[0] && !sig.heuristic_hosts[2]);
    CHECK(sig.heuristic_hosts[1] && !strcmp(sig.heuristic_hosts[1], "the host function 'heur_b'"));
    ConstValue out;
    Diag d;
    diag_init(&d, &c.src);
    CHECK(!sema_eval_heuristic(c.module, sig.heuristic_fns[1], NULL, NULL, 0, &c.arena, &d, &out));
    CHECK(d.errors == 1 &&
          strstr(d.text.data, "the host function 'heur_b', which tk does not run"));
    CHECK(sema_eval_heuristic(c.module, sig.heuristic_fns[2], NULL, NULL, 0, &c.arena, &d, &out));
    CHECK(out.kind == CV_INT && out.i == 2);
    CHECK(sema_eval_heuristic(c.module, sig.heuristic_fns[0], NULL, NULL, 0, &c.arena, &d, &out));
    CHECK(out.kind == CV_INT && out.i == 3);
    diag_free(&d);
    comp_free(&c);
}

int main(void)
{
    test_signature();
    test_tuple_signature();
    test_module();
    test_bad_module();
    test_host_heuristic();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}
