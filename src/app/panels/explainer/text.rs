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
    "One gradient-descent step is w ← w − η ∇L(w). When a rotation leaves the loss unchanged, as it \
     does here, the gradient rotates with the weights: ∇_{w′}L(Qw) = Q ∇_wL(w). A step taken after \
     rotating therefore equals the rotated step; this is rotational equivariance. In the lab it means \
     that GD started at W_0 and at QW_0, fed the same episodes, gives a second run that is Q times the \
     first at every step, up to rounding.",
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
    "Go back to the left canvas of section 3. GD's step always reaches the circle and Adam's first step \
     always reaches a corner of the square, and the two shapes explain the difference. Steepest descent \
     needs a ruler for step length. With the Euclidean ruler, whose unit ball is round, steepest descent \
     is GD. With the max norm ‖x‖_∞ = max_j |x_j| it is sign descent, and that ruler's unit ball is a \
     cube. A sphere has no preferred direction; a cube's faces and corners line up with the \
     coordinate axes.",
    "The symmetries a cube keeps are the permutations of the axes and their sign flips, and those are \
     exactly Adam's. Relabel or negate parameters and Adam does the same thing in the new labels; turn them \
     by 37° and it does something else. So Adam cannot single out one axis, but it can favour the axes as a \
     set. The right measurement is therefore one that ignores permutations and sign flips but notices \
     rotations, like A(K) = (1/V) Σ_a Σ_j (k_a)_j^4.",
    "So Adam has a way to break the symmetry; that is not yet a mechanism that lines features up \
     with the axes. Axis-aligned outliers show up in transformers trained with Adam and not in those trained with SGD, and per-coordinate \
     normalisation is the common suspect; how the alignment builds up step by step is still open. The \
     update rule suggests two pulls. A feature held by one coordinate collects its entire gradient there, \
     and Adam moves that coordinate by a full η. A feature spread over m coordinates gets about η in each, \
     a Euclidean move of about η√m, so the spread feature travels further. Either pull makes the path \
     depend on how features sit against the axes, which GD's path never does; the controlled test \
     (section 5) measures what happens in this model.",
    "## Privileged basis",
    "Interpretability calls a basis privileged when its directions behave differently from arbitrary \
     directions, so that “neuron 7” means something. A transformer's residual stream has no privileged basis \
     by construction, yet trained models show a few outlier channels with far larger activations than the \
     rest. Such outliers are usually measured by the excess kurtosis of an activation vector: 0 for \
     Gaussian entries, large when a handful of entries dominate.",
];

const TEST: &[&str] = &[
    "The controlled test gives every run a rotated twin. One random start W_0 and one random orthogonal \
     Q are drawn; each optimizer trains one copy from W_0 and one from QW_0, both on the identical \
     episode stream and both with zeroed optimizer state. The panel follows three quantities.",
    "Orientation divergence ‖W_t′ − QW_t‖_F / ‖W_t‖_F is plot (a); the Frobenius norm ‖·‖_F squares \
     every entry, adds them up and takes the root. GD's must stay at rounding noise, which is how the harness shows it is \
     right; Adam's grows.",
    "Gram divergence ‖G_t′ − G_t‖_F. This is the one recall can feel: if the two Adam runs differ only in \
     orientation, their Gram matrices and losses stay equal; if the Gram matrices split, basis sensitivity \
     changed something the model sees.",
    "Axis concentration A(K) = (1/V) Σ_a Σ_j (k_a)_j^4 is 1 when every key lies on an axis, 1/d_k when \
     each key spreads evenly over the coordinates, and 3/(d_k + 2) on average for random directions. \
     Plot (b) sets it against something sharper than that constant: the learned keys turned by many \
     random rotations, with A recomputed for each. The turned copies share the keys' Gram matrix \
     exactly, so only orientation tells them apart; an A(K) outside their shaded band means the \
     orientation itself is special.",
    "A single seed says little about A(K); the Seed sweep tab repeats the run over many seeds. Plot (c) can also \
     show the mean column norm. A key is its column of W_K scaled to length one, so the gradient with \
     respect to a column is perpendicular to it and GD lets the norms creep up only slowly; Adam's \
     per-coordinate steps have no such constraint. The forward pass never sees the norms, yet a longer \
     column gives its unit key a smaller effective step, so norms must be watched when optimizers are \
     compared.",
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
     spectrum), recall differs, and the orientation preference acted through the path taken. The first \
     thing to look at is the Gram divergence of the two Adam twins: if it grows, orientation changed \
     the path.",
    "## Speed or representation?",
    "Per step, Adam tends to train faster. Compared at a fixed step count, every difference mixes “Adam got \
     further” with “Adam ended up elsewhere”. Compare twice: at a matched budget and at matched held-out \
     loss. An A(K) gap that survives matched loss is about representation; one that vanishes was probably \
     about speed.",
    "## What this toy is not",
    "The finding that motivates the lab (Caples and Neuhaus, 2024: outlier channels in small language \
     models trained on TinyStories, under Adam only) comes from a 12M-parameter transformer: many \
     matrices trained together by Adam, joined by residual connections and LayerNorm. This lab trains one \
     matrix, normalises nothing but key length, and writes its memory by a fixed rule. The effect need \
     not carry over: finding nothing here would leave the transformer result standing.",
];

const BLIND: &[&str] = &[
    "## The origin of the question",
    "Elhage et al. (Anthropic, 2023), writing about privileged bases, found outlier dimensions in the \
     residual stream of a 200M-parameter model. Having excluded several architectural explanations, \
     they named Adam's per-coordinate normalisation as the one left, without a proof. Caples and \
     Neuhaus (2024) put it to a test: otherwise identical 12M-parameter models reached excess kurtosis \
     above 100 when trained with Adam and stayed near 0 with SGD and momentum. This lab asks the same \
     question of a model whose rotation symmetry is exact and proved in section 2; in a transformer the \
     symmetry is only approximate, because embeddings, unembeddings and the data carry structure of \
     their own.",
    "## Rotation sensitivity as a research topic",
    "Maes, Zhang and co-authors (2024) turned the parameter space of GPT-2-scale models by random \
     rotations and saw Adam's training loss get worse, while some structured rotations made it better. \
     Their reading: a convergence theory that cannot see rotations cannot account for Adam's advantage, \
     since the advantage depends on the basis. DePavia and co-authors (2025) show that Adam's implicit \
     bias in linear classification can change under small rotations of the data, and that an orthogonal \
     reparameterisation makes it equivariant again.",
    "## GD is not the only control",
    "Any optimizer equivariant under W → QW will do, and some learn much faster than plain GD. Muon (Jordan \
     et al., 2024) orthogonalises its momentum and is equivariant on both sides, since the polar factor of QM \
     is Q times that of M. Shampoo (Gupta et al., 2018) and SOAP (Vyas et al., 2024) adapt in a learned basis \
     instead of the coordinate one. A three-arm design (GD, Adam, Muon) separates adaptive step sizes from \
     coordinate-wise adaptive step sizes.",
    "## When Adam behaves like sign descent",
    "At the first step the match is exact (section 3). Later, Adam stays close to sign descent only \
     while each coordinate's gradient is steady compared with its noise. Balles and Hennig (2018) write \
     Adam as the gradient's sign times a per-coordinate factor that adapts to its variance; Kunstner and \
     co-authors (2023) argue that the sign accounts for most of what Adam gains over SGD on \
     transformers. The sign arm of the default preset has the cube's geometry with no moving averages \
     at all.",
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
