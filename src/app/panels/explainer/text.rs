//! The explainer's prose, written for this app. Markup: `_x` / `_{…}` subscript, `^x` / `^{…}`
//! superscript (see [`crate::app::widgets::math`]); a paragraph starting with `## ` is a
//! subheading.

/// The paragraphs of the section called `id` (empty for a section without explainer text).
pub fn paragraphs(id: &str) -> &'static [&'static str] {
    match id {
        "model" => MODEL,
        "axes" => AXES,
        "step" => STEP,
        "why" => WHY,
        "test" => TEST,
        "reading" => READING,
        "blind-spots" => BLIND,
        _ => &[],
    }
}

const MODEL: &[&str] = &[
    "The task is recall. An episode shows the model k pairs, each a key class a and a value class b, \
     and then asks for every value again, in a shuffled order.",
    "Only one thing is learned: a matrix W_K of size d_k × V. Scaling each of its columns to length one \
     gives the V keys k_a. Values are one-hot vectors e_b, and the memory is a V_b × d_k matrix S that is \
     emptied at the start of every episode.",
    "Reading key a gives the scores r = S k_a, and the prediction is softmax(g·r) over the value classes. \
     Writing the pair (a, b) nudges the memory by its own mistake:",
    "    δ = e_b − S k_a,        S ← S + β δ k_a^⊤.",
    "This is the delta rule (Widrow and Hoff, 1960): one gradient step on ½‖S k_a − e_b‖^2 with respect \
     to S. Since ‖k_a‖ = 1, the read at k_a afterwards is (1 − β) times the old read plus β e_b, so \
     β = 1 stores the pair exactly. The price is paid by every other key c: its read moves by \
     β δ (k_a^⊤ k_c). Keys at right angles leave each other alone; overlapping keys interfere.",
    "Training adjusts W_K by gradient descent through every write, so the outer loop decides where the keys \
     sit and the delta rule does the remembering. The whole layout is summarised by the Gram matrix \
     G = K^⊤K, the table of overlaps k_a^⊤ k_c, with ones on its diagonal.",
    "## Try it",
    "Drag the arrow tips. The keys are written in order K1, K2, … and key i stores value class i; then \
     every key is read from the final memory. The bars show each key's scores, with the correct class \
     outlined. Two keys pointing almost the same way: the second write spoils the first. Two keys pointing \
     almost opposite ways: the interference flips sign and pushes the wrong class down instead of up, \
     which is why the overlap's size alone does not predict recall. Three keys in a plane: no layout \
     stores all three perfectly, because the memory only has two input directions.",
];

const AXES: &[&str] = &[
    "Everything in this lab rests on one symmetry. Take any orthogonal matrix Q (a rotation, possibly \
     with a reflection: Q^⊤Q = I, so lengths and angles are kept). Turn every key with it and turn the \
     memory back:",
    "    W_K′ = Q W_K,     k_a′ = Q k_a,     S′ = S Q^⊤.",
    "Every read is the same as before, S′k_a′ = S Q^⊤Q k_a = S k_a, and every write keeps the pair \
     consistent, because δ k_a′^⊤ = δ k_a^⊤ Q^⊤ is exactly the change S′ should see. The Gram matrix does \
     not move either: K′^⊤K′ = K^⊤Q^⊤QK = G. Two layouts related by a rotation make identical predictions \
     and have identical loss on every episode.",
    "So the model has no way to know which way its coordinate axes point; only the keys' pairwise geometry \
     matters to it. If trained keys nevertheless line up with the axes of ℝ^{dₖ}, the loss cannot have \
     asked for that. Something else did, and the suspect is the optimizer.",
    "## Try it",
    "Turn the dial. All keys rotate together (the faded arrows are where they started). The Gram matrix \
     and every read score stay the same up to rounding (about 1e-16), while the axis concentration \
     A(K) — the statistic of section 5 — swings with the angle. The curve below shows A over the full turn.",
];

const STEP: &[&str] = &[
    "A gradient-descent step moves the parameters by w ← w − η ∇L(w). If the loss is rotation invariant, \
     as ours is, the gradient turns with the problem: ∇_{w′}L(Qw) = Q ∇_wL(w). So the step turns too. \
     Rotating and then stepping lands where stepping and then rotating does; this is called rotational \
     equivariance, and it means two GD runs started from W_0 and QW_0 on the same data stay exact \
     rotations of each other for ever.",
    "Adam (Kingma and Ba, 2015) keeps two running averages for every coordinate. With g_t = ∇L(w_t):",
    "    m_t = β_1 m_{t−1} + (1 − β_1) g_t,     v_t = β_2 v_{t−1} + (1 − β_2) g_t^2,",
    "    w_{t+1} = w_t − η · [m_t / (1 − β_1^t)] / ( √[v_t / (1 − β_2^t)] + ε ).",
    "The square, the root and the division act coordinate by coordinate, and squaring coordinates does not \
     commute with rotating them. The first step shows it most plainly: the bias corrections (the divisions \
     by 1 − β^t) turn m_1 into g_1 and v_1 into g_1^2, so for small ε",
    "    w_2 = w_1 − η g_1 / |g_1| = w_1 − η sign(g_1).",
    "Adam begins with sign descent: every coordinate moves by exactly η, however large or small its \
     gradient. Later steps smooth this, scaling each coordinate by its own recent gradient size.",
    "## Try it",
    "Drag the gradient g on the left. The blue arrow is GD's step −g, the vermilion one Adam's first step \
     −sign(g). On the right the whole world is turned by φ: solid arrows are the steps computed there, \
     dashed ones are the left steps carried over by Q. GD's always coincide (angle 0°). Adam's first \
     step always points along a diagonal of the square, and turning that diagonal by φ lands on \
     another diagonal only when φ is a multiple of 90° — so for every other angle the two Adam \
     arrows split. Switch on later Adam steps to watch a whole trajectory on a fixed quadratic drift \
     away from its rotated twin.",
];

const WHY: &[&str] = &[
    "Look at the left canvas of section 3 again. The GD step always ends on the circle; the sign step always \
     ends on a corner of the square. That is not decoration. GD is the steepest descent when step length is \
     measured by the Euclidean norm, whose unit ball is a sphere. Sign descent is the steepest descent when \
     it is measured by the max norm ‖x‖_∞ = max_j |x_j|, whose unit ball is a cube. A sphere looks the same \
     from every side; a cube has faces and corners tied to the coordinate axes.",
    "The symmetries a cube keeps are the permutations of the axes and their sign flips, and those are \
     exactly Adam's. Relabel or negate parameters and Adam does the same thing in the new labels; turn them \
     by 37° and it does something else. So Adam cannot single out one axis, but it can favour the axes as a \
     set. The right measurement is therefore one that ignores permutations and sign flips but notices \
     rotations, like A(K) = (1/V) Σ_a Σ_j (k_a)_j^4.",
    "This gives the optimizer a way to break the symmetry; it is not yet a mechanism for alignment. The \
     alignment is observed (in transformers trained with Adam, and not with SGD), and per-coordinate \
     normalisation is the usual explanation, but how it forms step by step is not settled. One intuition \
     fits the update rule: a feature living in a single coordinate gets its whole gradient in one slot, \
     and Adam gives that slot a full step; a feature spread over many coordinates gets a step of about η in \
     each, so as a whole it moves faster in the Euclidean sense. Either effect makes the dynamics depend on \
     how features sit against the axes, which GD never does. Which one wins here is an experiment.",
    "## Privileged basis",
    "Interpretability calls a basis privileged when its directions behave differently from arbitrary \
     directions, so that “neuron 7” means something. A transformer's residual stream has no privileged basis \
     by construction, yet trained models show a few outlier channels with far larger activations than the \
     rest. The excess kurtosis of an activation vector — zero for a Gaussian, large when a few entries \
     dominate — is the usual measure.",
];

const TEST: &[&str] = &[
    "The clean test is a paired run. Draw one initialisation W_0 and one random orthogonal Q. Train from W_0 \
     and from QW_0 on the same episodes, with optimizer state starting at zero, once per optimizer. Then \
     watch three things.",
    "Orientation divergence ‖W_t′ − QW_t‖_F / ‖W_t‖_F (the Frobenius norm is the root of the sum of squared \
     entries). For GD it must stay at rounding noise — that is the proof the harness is right. For Adam it \
     grows.",
    "Gram divergence ‖G_t′ − G_t‖_F. This is the one recall can feel: if the two Adam runs differ only in \
     orientation, their Gram matrices and losses stay equal; if the Gram matrices split, basis sensitivity \
     changed something the model sees.",
    "Axis concentration A(K) = (1/V) Σ_a Σ_j (k_a)_j^4: 1 for keys on the axes, 1/d_k for keys spread evenly, \
     3/(d_k + 2) on average for random directions. A sharper yardstick than that constant: rotate the learned \
     keys by many random Q and compute A each time. That baseline has the learned keys' geometry and differs \
     only in orientation; learned keys well outside its spread have a special orientation.",
    "One seed proves nothing about A(K): use the seed sweep. Watch the mean column norm as well: for a \
     scale-invariant parameter GD's gradient is orthogonal to the column, so GD's norms grow slowly, while \
     Adam's steps are not orthogonal to anything in particular. The forward pass ignores these norms, but \
     the effective learning rate of the unit key does not — a confound to control when comparing optimizers.",
];

const READING: &[&str] = &[
    "Suppose the experiment is run at scale and produces numbers. Three facts limit what they can \
     mean, and one caveat limits how far they reach.",
    "## A rotation alone cannot change recall",
    "Section 2 proved it. Finding that Adam's keys are more axis-aligned than GD's says nothing, by itself, \
     about which model remembers better. That is a fingerprint, not a performance effect.",
    "## Orientation matters for recall only through geometry",
    "Adam's preference for the axes is a statement about its dynamics, and dynamics decide where in the space \
     of Gram matrices training ends. If Adam's path reaches a different G than GD's (other overlaps, another \
     spectrum), recall differs, and the orientation preference acted through the path taken. The Gram \
     divergence between the two Adam twins is the simplest evidence that the path depends on orientation at all.",
    "## Separate speed from representation",
    "Adam usually trains faster per step. Compared at a fixed step count, every difference mixes “Adam got \
     further” with “Adam went somewhere else”. Compare twice: at a matched budget and at matched held-out \
     loss. An A(K) gap that survives matched loss is about representation; one that vanishes was probably \
     about speed.",
    "## What this toy is not",
    "The result behind the question (Caples and Neuhaus, 2024: small language models trained on TinyStories, \
     outlier channels under Adam only) concerns a 12M-parameter transformer with LayerNorm, residual \
     connections and many Adam-trained matrices feeding each other. Our model has one matrix, no \
     normalisation layer beyond key length, and a memory written by a fixed rule. Nothing forces the effect \
     to carry over, and a null result here would not contradict the transformer finding.",
];

const BLIND: &[&str] = &[
    "## Where “privileged basis” comes from",
    "Anthropic's 2023 interpretability note on privileged bases in the residual stream (Elhage et al.) saw \
     outlier dimensions in a 200M-parameter model, ruled out several architectural causes, and arrived by \
     elimination at Adam's per-coordinate normalisation, without proving it. Caples and Neuhaus (2024) then \
     trained matched 12M-parameter models with Adam and with SGD plus momentum and found excess kurtosis \
     above 100 under Adam and near zero under SGD. The experiment here ports that logic to a model whose \
     symmetry is exact and provable; in a transformer it is only approximate, since embeddings, \
     unembeddings and data have structure of their own.",
    "## Rotation sensitivity as a research topic",
    "Maes, Zhang and co-authors (2024) measured how Adam's training loss on GPT-2-scale models degrades under \
     random rotations of parameter space, and found that structured rotations can help; they conclude that \
     rotation-invariant convergence theory cannot explain Adam's advantage, which lives in the basis. \
     DePavia and co-authors (2025) show Adam's implicit bias on linear classification can be brittle under \
     small rotations of the data, and that an orthogonal reparameterisation restores equivariance.",
    "## GD is not the only control",
    "Any optimizer equivariant under W → QW will do, and some learn much faster than plain GD. Muon (Jordan \
     et al., 2024) orthogonalises its momentum and is equivariant on both sides, since the polar factor of QM \
     is Q times that of M. Shampoo (Gupta et al., 2018) and SOAP (Vyas et al., 2024) adapt in a learned basis \
     instead of the coordinate one. A three-arm design (GD, Adam, Muon) separates adaptive step sizes from \
     coordinate-wise adaptive step sizes.",
    "## Adam is only sometimes sign descent",
    "The first-step identity is exact; afterwards Adam equals sign descent only when gradients are consistent \
     relative to their noise. Balles and Hennig (2018) split Adam into a sign part and a variance-adaptation \
     part; Kunstner and co-authors (2023) argue the sign part explains most of Adam's edge over SGD on \
     transformers. Plain sign descent as an extra arm has the cube's geometry without the moving averages.",
    "## Confounds of this model",
    "The forward pass ignores each column's norm but the optimizers do not: equalise or track norms. Adam's ε \
     moves it between a fully per-coordinate normalised update (ε → 0, sign-like) and momentum SGD (ε \
     large, where the denominator is nearly constant): sweep it, and if the axis effect fades as ε grows, \
     the normalisation is the cause. Small d_k makes A(K) coarse: at d_k = 3 the gap between \
     random (3/(d_k+2) = 0.6) and aligned (1) is 0.4, and chance fills much of it — use d_k ≥ 16 and always \
     report the rotation baseline. Finally, axis concentration of keys is not kurtosis of activations; here \
     the activations' analogue is the memory S or the read S k_a. The controlled test has a tab for each \
     check: ε sweep, matched loss, d_k sweep, and “Memory & reads”, which tracks the kurtosis of S and of \
     the reads against their own rotation baselines.",
];
