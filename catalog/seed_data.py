# French copy uses typographic apostrophes, and ranges use en dashes, on purpose.
# ruff: noqa: RUF001, RUF002
"""The catalog the store opens with: seven GPUs, their prices, advice and the two environments.

Reviewed in git like code. `catalog_seed()` (catalog/services.py) loads it; what it
overwrites on a second run and what it leaves to staff is documented there.

Prices are EUR per GPU per day, set from late-2026 on-demand market rates (USD per GPU-hour:
H200 3.6–4.6, H100 SXM 2.7–4.3, H100 PCIe 2.0–3.3, A100 80 GB 1.2–1.6, RTX A6000 0.5–1.1,
RTX 4090 0.35–0.75) converted at about 1.15 USD per EUR: the 3-day rate sits in the upper half
of the range, the 30-day rate near its bottom.
"""

import re
from decimal import Decimal

# French puts a non-breaking space before these signs; writing it by hand in every
# sentence is error-prone, so the seed texts are typed with plain spaces.
_FRENCH_SPACE_BEFORE = re.compile(r" ([:;?!%»])")
# Nor should a line break split a quantity from its unit ("80 / Go").
_FRENCH_NUMBER_UNIT = re.compile(r"(\d) (Go|To)\b")


def text(fr: str, en: str) -> dict[str, str]:
    fr = _FRENCH_NUMBER_UNIT.sub("\\1\u00a0\\2", fr)
    return {"fr": _FRENCH_SPACE_BEFORE.sub("\u00a0\\1", fr), "en": en}


def rates(three: str, seven: str, thirty: str) -> dict[int, Decimal]:
    return {3: Decimal(three), 7: Decimal(seven), 30: Decimal(thirty)}


GPUS: list[dict] = [
    {
        "slug": "h200",
        "name": "H200",
        "architecture": "Hopper",
        "memory_gb": 141,
        "memory_type": "HBM3e",
        "memory_bandwidth_gbps": 4800,
        "form_factor": "sxm",
        "interconnect": "NVLink 4 · NVSwitch · PCIe 5.0 x16",
        "precisions": "FP64, TF32, BF16, FP16, FP8, INT8",
        "power_watts": 700,
        "units_total": 8,
        "display_order": 10,
        "prices": rates("92.00", "86.00", "76.00"),
        "tagline": text(
            "141 Go de HBM3e par carte, pour les modèles qui débordent à 80 Go",
            "141 GB of HBM3e per card, for models that overflow at 80 GB",
        ),
        "summary": text(
            "Hopper avec 141 Go de mémoire et 4,8 To/s de bande passante, reliée en NVLink. "
            "Le choix qui s’impose quand la limite est la mémoire par carte.",
            "Hopper with 141 GB of memory and 4.8 TB/s of bandwidth, linked by NVLink. "
            "The obvious choice when the limit is memory per card.",
        ),
        "advice": [
            (
                text(
                    "141 Go pour les tâches qui débordent à 80 Go",
                    "141 GB for jobs that overflow at 80 GB",
                ),
                text(
                    "On choisit le H200 d’abord pour une raison : la mémoire par carte. Si une "
                    "étape d’entraînement complète déborde d’une carte de 80 Go, cherchez d’où "
                    "vient le pic avant de changer de matériel : poids, gradients, états de "
                    "l’optimiseur et activations ont chacun leur part, et seules les activations "
                    "grandissent avec le batch et la longueur des séquences.\n\n"
                    "Avec 141 Go de HBM3e et 4,8 To/s de bande passante, la place gagnée peut "
                    "servir à un micro-lot plus grand, à des contextes plus longs ou à un modèle "
                    "qu’il n’est plus nécessaire de découper. Mesurez de nouveau le pic sur le "
                    "H200 avec les mêmes entrées, exemples longs compris.",
                    "The H200 is chosen for one reason above all: memory per card. If a full "
                    "training step overflows an 80 GB card, find out where the peak comes from "
                    "before changing hardware: weights, gradients, optimizer states and "
                    "activations each take their share, and only activations grow with batch "
                    "size and sequence length.\n\n"
                    "With 141 GB of HBM3e and 4.8 TB/s of bandwidth, the extra room can go to a "
                    "larger micro-batch, longer contexts or a model that no longer needs "
                    "sharding. Measure the peak again on the H200 with the same inputs, long "
                    "examples included.",
                ),
            ),
            (
                text(
                    "Une comparaison de précision honnête",
                    "An honest precision comparison",
                ),
                text(
                    "Plus de mémoire incite à tout changer d’un coup. Déplacez un levier à la "
                    "fois : d’abord la même exécution que sur 80 Go, puis le BF16 avec "
                    "torch.autocast, puis un batch plus grand. Chaque changement a droit à son "
                    "exécution de comparaison, avec la même graine et les mêmes métriques de "
                    "validation.\n\n"
                    "Si vous augmentez le batch par GPU, le batch global change aussi, et avec "
                    "lui le taux d’apprentissage qui lui convient. Notez pour chaque exécution le "
                    "batch par GPU, le nombre de processus et les étapes d’accumulation.",
                    "More memory tempts you to change everything at once. Move one lever at a "
                    "time: first the same run as on 80 GB, then BF16 with torch.autocast, then a "
                    "bigger batch. Each change gets its own comparison run, with the same seed "
                    "and the same validation metrics.\n\n"
                    "If you raise the per-GPU batch, the global batch changes too, and so does "
                    "the learning rate that suits it. Write down the per-GPU batch, the number "
                    "of processes and the accumulation steps for every run.",
                ),
            ),
            (
                text(
                    "Au-delà de 141 Go : répartir le modèle",
                    "Beyond 141 GB: split the model",
                ),
                text(
                    "Si même 141 Go ne suffisent pas, aucune carte seule ne portera la tâche. "
                    "Répartissez-la sur plusieurs H200 : le parallélisme de données partitionné "
                    "(FSDP ou ZeRO) distribue paramètres, gradients et états de l’optimiseur ; "
                    "le parallélisme de tenseurs ou de pipeline découpe les couches elles-mêmes. "
                    "Les cartes sont reliées par NVLink, ce qui garde ces échanges rapides, mais "
                    "mesurez le temps par étape à chaque échelle avant de réserver un mois.",
                    "If even 141 GB is not enough, no single card will hold the job. Split it "
                    "across several H200: sharded data parallelism (FSDP or ZeRO) spreads "
                    "parameters, gradients and optimizer states; tensor or pipeline parallelism "
                    "splits the layers themselves. The cards are linked by NVLink, which keeps "
                    "that traffic fast, but measure the time per step at each scale before "
                    "booking a month.",
                ),
            ),
            (
                text(
                    "Des checkpoints plus lourds : tester la reprise",
                    "Heavier checkpoints: test the resume",
                ),
                text(
                    "Un modèle qui remplit 141 Go produit des checkpoints volumineux. Vérifiez le "
                    "temps et l’espace disque d’une sauvegarde, conservez l’état de l’optimiseur "
                    "avec les poids, et rechargez un checkpoint dès le premier jour pour prouver "
                    "que l’exécution sait reprendre.\n\n"
                    "Trois jours valident ce chemin, sept jours une série d’exécutions, trente "
                    "jours une longue campagne jalonnée de points de reprise réguliers.",
                    "A model that fills 141 GB writes large checkpoints. Check how long a save "
                    "takes and how much disk it needs, keep the optimizer state with the "
                    "weights, and reload a checkpoint on the first day to prove the run can "
                    "resume.\n\n"
                    "Three days validate that path, seven days a series of runs, thirty days a "
                    "long campaign with regular resume points.",
                ),
            ),
        ],
        "alternatives": [
            (
                "h100-sxm",
                text(
                    "Votre pic reste sous 72 Go environ et vos cartes échangent souvent : 80 Go "
                    "en NVLink pour moins cher.",
                    "Your peak stays below about 72 GB and your cards exchange often: 80 GB on "
                    "NVLink for less.",
                ),
            ),
            (
                "h100-pcie",
                text(
                    "Votre tâche tient dans 80 Go avec de la marge et reste sur une carte.",
                    "Your job fits in 80 GB with headroom and stays on one card.",
                ),
            ),
        ],
    },
    {
        "slug": "h100-sxm",
        "name": "H100 SXM",
        "architecture": "Hopper",
        "memory_gb": 80,
        "memory_type": "HBM3",
        "memory_bandwidth_gbps": 3350,
        "form_factor": "sxm",
        "interconnect": "NVLink 4 · NVSwitch · PCIe 5.0 x16",
        "precisions": "FP64, TF32, BF16, FP16, FP8, INT8",
        "power_watts": 700,
        "units_total": 16,
        "display_order": 20,
        "prices": rates("78.00", "72.00", "62.00"),
        "tagline": text(
            "Hopper 80 Go en NVLink, pour l’entraînement multi-GPU qui communique beaucoup",
            "80 GB Hopper on NVLink, for multi-GPU training that communicates a lot",
        ),
        "summary": text(
            "80 Go de HBM3 à 3,35 To/s et NVLink 4 entre les cartes. Pour les entraînements "
            "qui synchronisent souvent leurs GPU, à condition de mesurer votre topologie.",
            "80 GB of HBM3 at 3.35 TB/s and NVLink 4 between cards. For training runs that "
            "synchronise their GPUs often, provided you measure your topology.",
        ),
        "advice": [
            (
                text(
                    "Mesurer une étape d’entraînement complète",
                    "Measure a complete training step",
                ),
                text(
                    "Avant d’augmenter la taille du batch, observez une étape entière : lecture "
                    "d’un lot, passe avant, rétropropagation et mise à jour de l’optimiseur. Le "
                    "chiffre utile est le pic atteint pendant ce cycle, relevé avec "
                    "torch.cuda.max_memory_allocated() après quelques itérations, et non "
                    "l’occupation juste après le chargement du modèle.\n\n"
                    "Les poids ne représentent qu’une partie des 80 Go : activations, gradients "
                    "et états de l’optimiseur prennent aussi leur place. Alimentez l’essai avec "
                    "de vraies données, les plus longues comprises ; un premier lot d’exemples "
                    "courts et faciles sous-dimensionnerait toute la campagne.",
                    "Before raising the batch size, watch one whole step: reading a batch, "
                    "forward pass, backward pass and optimizer update. The number that matters "
                    "is the peak reached during that cycle, read with "
                    "torch.cuda.max_memory_allocated() after a few iterations, not the "
                    "footprint right after loading the model.\n\n"
                    "The weights are only part of the 80 GB: activations, gradients and "
                    "optimizer states take their place too. Feed the test with real data, the "
                    "longest examples included; a first batch of short, easy examples would "
                    "size the whole campaign too small.",
                ),
            ),
            (
                text(
                    "Précision mixte, vérifiée par une exécution de référence",
                    "Mixed precision, checked against a reference run",
                ),
                text(
                    "Sur Hopper, le BF16 via torch.autocast accélère souvent l’entraînement et "
                    "allège la mémoire des activations. L’activer ne démontre pas pour autant "
                    "la stabilité numérique : lancez une courte exécution de référence en "
                    "pleine précision, avec la même graine et les mêmes données, puis comparez "
                    "les courbes de perte et les métriques de validation avant d’adopter le "
                    "réglage.\n\n"
                    "Sur plusieurs cartes, le batch global vaut le batch par GPU multiplié par "
                    "le nombre de processus et par le nombre d’étapes d’accumulation. Notez ces "
                    "trois valeurs avec le taux d’apprentissage : modifier l’une revient à "
                    "changer d’expérience.",
                    "On Hopper, BF16 through torch.autocast often speeds up training and "
                    "lightens activation memory. Turning it on proves nothing about numerical "
                    "stability, though: run a short full-precision reference with the same seed "
                    "and data, then compare loss curves and validation metrics before adopting "
                    "the setting.\n\n"
                    "On several cards, the global batch is the per-GPU batch times the number "
                    "of processes times the accumulation steps. Write these three values down "
                    "with the learning rate: changing any of them means a different "
                    "experiment.",
                ),
            ),
            (
                text("SXM, PCIe ou plus de mémoire ?", "SXM, PCIe or more memory?"),
                text(
                    "La version SXM se justifie quand vos processus échangent souvent gradients "
                    "ou activations. Vérifiez-le sur votre propre tâche : lancez "
                    "nvidia-smi topo -m et chronométrez quelques étapes sur 1, 2 puis 4 GPU ; "
                    "l’étiquette seule ne dit pas comment votre code passe à l’échelle.\n\n"
                    "Si le travail reste surtout sur une carte, le H100 PCIe offre les mêmes "
                    "80 Go à un tarif plus bas. Si le problème est la mémoire par carte plutôt "
                    "que la communication, regardez le H200 et ses 141 Go.",
                    "The SXM version pays off when your processes exchange gradients or "
                    "activations often. Check it on your own job: run nvidia-smi topo -m and "
                    "time a few steps on 1, 2 and then 4 GPUs; the label alone does not tell "
                    "you how your code scales.\n\n"
                    "If the work mostly stays on one card, the H100 PCIe offers the same 80 GB "
                    "for a lower rate. If the problem is memory per card rather than "
                    "communication, look at the H200 and its 141 GB.",
                ),
            ),
            (
                text(
                    "Construire la durée autour d’une reprise testée",
                    "Plan the term around a tested resume",
                ),
                text(
                    "Trois jours suffisent pour valider la boucle, écrire un checkpoint et "
                    "prouver qu’on sait repartir de celui-ci. Une semaine convient à une série "
                    "d’ablations ; un mois, à des expériences longues que vous suivez et "
                    "reprenez. Réservez du temps pour l’évaluation et l’export du modèle, pas "
                    "seulement pour les époques.\n\n"
                    "Sauvegardez à intervalles réguliers, avec l’état de l’optimiseur et le "
                    "numéro d’étape, et testez une reprise dès le premier jour : une "
                    "interruption coûte alors quelques minutes plutôt qu’une exécution "
                    "entière.",
                    "Three days are enough to validate the loop, write a checkpoint and prove "
                    "you can restart from it. A week suits a series of ablations; a month suits "
                    "long experiments that you follow and resume. Keep time for evaluation and "
                    "model export, not only for epochs.\n\n"
                    "Save at regular intervals, with the optimizer state and the step number, "
                    "and test a resume on the first day: an interruption then costs minutes "
                    "instead of a whole run.",
                ),
            ),
        ],
        "alternatives": [
            (
                "h200",
                text(
                    "Votre pic dépasse 80 Go : le problème est la mémoire par carte, pas la "
                    "communication.",
                    "Your peak exceeds 80 GB: the problem is memory per card, not communication.",
                ),
            ),
            (
                "h100-pcie",
                text(
                    "Vos tâches restent surtout sur une carte : mêmes 80 Go, tarif plus bas.",
                    "Your jobs mostly stay on one card: the same 80 GB for a lower rate.",
                ),
            ),
            (
                "a100-80gb",
                text(
                    "80 Go vous suffisent et le budget compte plus que la vitesse par étape.",
                    "80 GB is enough and budget matters more than speed per step.",
                ),
            ),
        ],
    },
    {
        "slug": "h100-pcie",
        "name": "H100 PCIe",
        "architecture": "Hopper",
        "memory_gb": 80,
        "memory_type": "HBM2e",
        "memory_bandwidth_gbps": 2000,
        "form_factor": "pcie",
        "interconnect": "PCIe 5.0 x16 · NVLink ×2",
        "precisions": "FP64, TF32, BF16, FP16, FP8, INT8",
        "power_watts": 350,
        "units_total": 8,
        "display_order": 30,
        "prices": rates("62.00", "57.00", "48.00"),
        "tagline": text(
            "Les 80 Go de Hopper au format PCIe, pour le travail sur une carte",
            "Hopper's 80 GB in PCIe form, for single-card work",
        ),
        "summary": text(
            "80 Go de HBM2e, BF16 et FP8, 350 W. La même capacité que la version SXM, à un "
            "tarif plus bas, quand vos tâches tiennent sur une carte.",
            "80 GB of HBM2e, BF16 and FP8, 350 W. The same capacity as the SXM version, for a "
            "lower rate, when your jobs fit on one card.",
        ),
        "advice": [
            (
                text(
                    "Une carte, 80 Go : dimensionner sur le vrai pic",
                    "One card, 80 GB: size it on the real peak",
                ),
                text(
                    "Le H100 PCIe donne 80 Go de HBM2e à chaque processus. Pour savoir si votre "
                    "tâche tient, exécutez quelques étapes complètes, chargement des données, "
                    "passe avant, rétropropagation et mise à jour de l’optimiseur compris, puis "
                    "lisez le pic avec torch.cuda.max_memory_allocated(). Les poids n’en sont "
                    "qu’une partie : gradients, états de l’optimiseur et activations pèsent "
                    "souvent davantage.\n\n"
                    "Gardez environ 10 % de marge : des séquences plus longues, une passe de "
                    "validation ou la fragmentation de la mémoire peuvent dépasser ce qu’un "
                    "essai court a montré.",
                    "The H100 PCIe gives each process 80 GB of HBM2e. To know whether your job "
                    "fits, run a few complete steps, data loading, forward, backward and "
                    "optimizer update included, then read the peak with "
                    "torch.cuda.max_memory_allocated(). The weights are only part of it: "
                    "gradients, optimizer states and activations often weigh more.\n\n"
                    "Keep about 10% headroom: longer sequences, a validation pass or memory "
                    "fragmentation can go beyond what a short test showed.",
                ),
            ),
            (
                text(
                    "BF16 sur Hopper, avec une exécution de comparaison",
                    "BF16 on Hopper, with a comparison run",
                ),
                text(
                    "torch.autocast en BF16 est le premier réglage habituel sur cette carte : "
                    "moins de mémoire pour les activations et des produits matriciels plus "
                    "rapides. Validez-le sur votre perte et vos métriques face à une courte "
                    "exécution en FP32 ou TF32 avec la même graine ; conservez les deux journaux "
                    "et les paramètres exacts.\n\n"
                    "Le FP8 existe aussi sur Hopper, mais il demande des bibliothèques dédiées "
                    "et un contrôle attentif de la qualité : traitez-le comme une expérience à "
                    "part, pas comme un simple interrupteur.",
                    "torch.autocast in BF16 is the usual first setting on this card: less "
                    "memory for activations and faster matrix products. Validate it on your "
                    "loss and metrics against a short FP32 or TF32 run with the same seed; keep "
                    "both logs and the exact settings.\n\n"
                    "FP8 exists on Hopper too, but it needs dedicated libraries and a careful "
                    "quality check: treat it as a separate experiment, not as a switch.",
                ),
            ),
            (
                text("Quand le PCIe est le bon choix", "When PCIe is the right choice"),
                text(
                    "Chaque carte communique avec les autres par PCIe 5.0 (un pont NVLink peut "
                    "en relier deux). C’est largement suffisant pour un travail monocarte, des "
                    "exécutions indépendantes côte à côte, de l’inférence ou une recherche "
                    "d’hyperparamètres. Si vos processus synchronisent les gradients à chaque "
                    "étape sur de nombreuses cartes, chronométrez quelques étapes sur 1, 2 puis "
                    "4 GPU : si l’efficacité chute, le H100 SXM et son maillage NVLink "
                    "conviendront mieux.\n\n"
                    "Sur plusieurs cartes, notez séparément le batch par GPU et le batch "
                    "global ; changer le nombre de processus ou d’étapes d’accumulation "
                    "modifie l’expérience autant qu’un nouveau taux d’apprentissage.",
                    "Each card talks to the others over PCIe 5.0 (an NVLink bridge can join "
                    "two). That is plenty for single-card work, independent runs side by side, "
                    "inference or a hyper-parameter search. If your processes synchronise "
                    "gradients at every step across many cards, time a few steps on 1, 2 and "
                    "then 4 GPUs: if efficiency drops, the H100 SXM and its NVLink mesh will "
                    "suit you better.\n\n"
                    "On several cards, record the per-GPU batch and the global batch "
                    "separately; changing the number of processes or accumulation steps "
                    "changes the experiment as much as a new learning rate.",
                ),
            ),
            (
                text("Prévoir 3, 7 ou 30 jours", "Planning 3, 7 or 30 days"),
                text(
                    "Utilisez trois jours pour faire tourner la chaîne de bout en bout, avec un "
                    "checkpoint écrit puis rechargé. Une semaine permet quelques exécutions "
                    "comparables ; un mois, une campagne suivie dans la durée.\n\n"
                    "Fixez la graine, notez les versions des bibliothèques et gardez vos "
                    "checkpoints avec l’état de l’optimiseur : n’importe quelle exécution peut "
                    "alors être reprise ou rejouée.",
                    "Use three days to get the pipeline running end to end, with a checkpoint "
                    "written and reloaded. A week allows a few comparable runs; a month, a "
                    "campaign followed over time.\n\n"
                    "Fix the seed, write down library versions and keep your checkpoints with "
                    "the optimizer state: any run can then be resumed or replayed.",
                ),
            ),
        ],
        "alternatives": [
            (
                "h100-sxm",
                text(
                    "Vos GPU échangent à chaque étape et la mesure montre que le PCIe freine.",
                    "Your GPUs exchange at every step and measurement shows PCIe slows you down.",
                ),
            ),
            (
                "a100-80gb",
                text(
                    "Mêmes 80 Go pour un tarif plus bas, si Hopper n’est pas indispensable.",
                    "The same 80 GB for a lower rate, if Hopper is not essential.",
                ),
            ),
            (
                "h200",
                text(
                    "Votre pic déborde de 80 Go, même avec de la marge.",
                    "Your peak overflows 80 GB, even with headroom.",
                ),
            ),
        ],
    },
    {
        "slug": "a100-80gb",
        "name": "A100 80GB",
        "architecture": "Ampere",
        "memory_gb": 80,
        "memory_type": "HBM2e",
        "memory_bandwidth_gbps": 2039,
        "form_factor": "sxm",
        "interconnect": "NVLink 3 · NVSwitch · PCIe 4.0 x16",
        "precisions": "FP64, TF32, BF16, FP16, INT8",
        "power_watts": 400,
        "units_total": 16,
        "display_order": 40,
        "prices": rates("33.00", "31.00", "27.00"),
        "tagline": text(
            "80 Go éprouvés sur Ampere, pour reprendre et reproduire",
            "Proven 80 GB on Ampere, to resume and reproduce",
        ),
        "summary": text(
            "80 Go de HBM2e à 2 To/s, BF16 et TF32, NVLink 3. Une valeur sûre pour reprendre "
            "un projet connu avec ses paramètres.",
            "80 GB of HBM2e at 2 TB/s, BF16 and TF32, NVLink 3. A safe choice to pick up a "
            "known project with its settings.",
        ),
        "advice": [
            (
                text(
                    "Reprendre un projet avec ses réglages exacts",
                    "Pick up a project with its exact settings",
                ),
                text(
                    "Apportez ce qui rend une exécution répétable : le commit de votre code, un "
                    "fichier de dépendances verrouillé, la configuration et un petit jeu "
                    "d’évaluation. Contrôlez d’abord que le modèle se recharge et que les "
                    "données sont lues correctement ; ne touchez au batch ou à l’optimiseur "
                    "qu’ensuite.\n\n"
                    "Une graine fixe ne suffit pas à obtenir des résultats identiques : une "
                    "nouvelle version de PyTorch, un autre matériel ou un noyau non "
                    "déterministe peuvent décaler les chiffres. Consignez les conditions de "
                    "chaque exécution et les écarts constatés, pour pouvoir expliquer une "
                    "différence plus tard.",
                    "Bring what makes a run repeatable: the commit of your code, a locked "
                    "dependency file, the configuration and a small evaluation set. First check "
                    "that the model reloads and the data is read correctly; only then touch the "
                    "batch or the optimizer.\n\n"
                    "A fixed seed is not enough for identical results: a new PyTorch version, "
                    "different hardware or a non-deterministic kernel can shift the numbers. "
                    "Record the conditions of each run and the gaps you observe, so that a "
                    "difference can be explained later.",
                ),
            ),
            (
                text(
                    "Consacrer les 80 Go au moment le plus chargé",
                    "Spend the 80 GB on the busiest moment",
                ),
                text(
                    "Relevez la mémoire au sommet de la boucle, en général pendant la "
                    "rétropropagation et la mise à jour de l’optimiseur, et non juste après "
                    "l’import du modèle. Un entraînement garde des gradients et des états "
                    "d’optimiseur dont l’inférence se passe : un modèle à l’aise en inférence "
                    "peut déborder à l’entraînement.\n\n"
                    "L’accumulation des gradients permet de travailler avec des micro-lots plus "
                    "petits, mais les poids et l’état de l’optimiseur restent en mémoire quelle "
                    "que soit leur taille. L’A100 gère le BF16 comme le TF32 et le FP16 : "
                    "choisissez le format selon les opérations et la qualité attendue, puis "
                    "appliquez les mêmes règles aux deux expériences que vous comparez.",
                    "Read memory at the top of the loop, usually during the backward pass and "
                    "the optimizer update, not right after importing the model. Training keeps "
                    "gradients and optimizer states that inference does without: a model that "
                    "is comfortable in inference can overflow in training.\n\n"
                    "Gradient accumulation lets you work with smaller micro-batches, but the "
                    "weights and the optimizer state stay in memory whatever their size. The "
                    "A100 handles BF16 as well as TF32 and FP16: choose the format by operation "
                    "and expected quality, then apply the same rules to both experiments you "
                    "compare.",
                ),
            ),
            (
                text(
                    "Choisir une alternative d’après le diagnostic",
                    "Choose an alternative from the diagnosis",
                ),
                text(
                    "Vous tenez dans 80 Go et la génération Hopper vous intéresse ? Relancez le "
                    "protocole à l’identique sur un H100 SXM et comparez le temps par étape. "
                    "Vos allocations débordent déjà ? Le H200 et ses 141 Go traitent ce "
                    "problème plus directement.\n\n"
                    "À l’inverse, si votre pic reste nettement sous 48 Go, un essai sur "
                    "RTX A6000 coûte moins cher avant d’engager davantage de capacité.",
                    "You fit in 80 GB and are curious about Hopper? Rerun the protocol "
                    "unchanged on an H100 SXM and compare the time per step. Your allocations "
                    "already overflow? The H200 and its 141 GB address that problem more "
                    "directly.\n\n"
                    "Conversely, if your peak stays well below 48 GB, a trial on an RTX A6000 "
                    "costs less before you commit to more capacity.",
                ),
            ),
            (
                text(
                    "Réserver une durée et garder des checkpoints utilisables",
                    "Book a term and keep your checkpoints usable",
                ),
                text(
                    "Comptez trois jours pour reproduire un résultat précis, une semaine pour "
                    "essayer quelques variantes, trente jours pour une série longue jalonnée "
                    "de points de reprise. Étiquetez chaque checkpoint avec son étape et sa "
                    "configuration, et vérifiez qu’il se recharge avant la fin de la "
                    "location.\n\n"
                    "Reportez le numéro de commande dans vos notes d’expérience : vous saurez "
                    "plus tard sur quelle machine et à quelle période chaque résultat a été "
                    "obtenu.",
                    "Allow three days to reproduce a specific result, a week to explore a few "
                    "variants, thirty days for a long series with resume points along the way. "
                    "Label each checkpoint with its step and configuration, and check that it "
                    "reloads before the rental ends.\n\n"
                    "Copy the order number into your experiment notes: later you will know on "
                    "which machine and in which period each result was obtained.",
                ),
            ),
        ],
        "alternatives": [
            (
                "h100-sxm",
                text(
                    "80 Go vous suffisent et vous voulez mesurer l’apport de Hopper avec le "
                    "même protocole.",
                    "80 GB is enough and you want to measure what Hopper brings with the same "
                    "protocol.",
                ),
            ),
            (
                "h200",
                text(
                    "Vos allocations débordent déjà des 80 Go.",
                    "Your allocations already overflow 80 GB.",
                ),
            ),
            (
                "rtx-a6000",
                text(
                    "Votre projet reste nettement sous 48 Go : un essai moins coûteux d’abord.",
                    "Your project stays well below 48 GB: a cheaper trial first.",
                ),
            ),
        ],
    },
    {
        "slug": "rtx-a6000",
        "name": "RTX A6000",
        "architecture": "Ampere",
        "memory_gb": 48,
        "memory_type": "GDDR6 ECC",
        "memory_bandwidth_gbps": 768,
        "form_factor": "pcie",
        "interconnect": "PCIe 4.0 x16 · NVLink ×2",
        "precisions": "FP32, TF32, BF16, FP16, INT8",
        "power_watts": 300,
        "units_total": 12,
        "display_order": 50,
        "prices": rates("22.00", "20.00", "16.00"),
        "tagline": text(
            "48 Go avec ECC, quand 24 Go ne suffisent plus",
            "48 GB with ECC, when 24 GB is no longer enough",
        ),
        "summary": text(
            "Ampere professionnelle, 48 Go de GDDR6 et 300 W. Pour les tâches entre 24 et "
            "48 Go, sans raccourcir vos exemples.",
            "Professional Ampere, 48 GB of GDDR6 and 300 W. For jobs between 24 and 48 GB, "
            "without shortening your examples.",
        ),
        "advice": [
            (
                text(
                    "48 Go pour ce qui ne tient pas dans 24",
                    "48 GB for what does not fit in 24",
                ),
                text(
                    "La RTX A6000 double la mémoire d’une carte de 24 Go, en GDDR6 avec ECC. "
                    "C’est l’étape raisonnable quand votre pic mesuré se situe entre 24 et "
                    "environ 43 Go, ou quand réduire les exemples pour tenir sur une carte plus "
                    "petite changerait la question posée.\n\n"
                    "Mesurez le pic sur des étapes d’entraînement complètes, validation "
                    "comprise, avec des entrées représentatives : ce sont les exemples les plus "
                    "longs qui décident si l’exécution tient plusieurs jours.",
                    "The RTX A6000 doubles the memory of a 24 GB card, in GDDR6 with ECC. It is "
                    "the sensible step when your measured peak sits between 24 and about 43 GB, "
                    "or when shrinking examples to fit a smaller card would change the question "
                    "you are asking.\n\n"
                    "Measure the peak over complete training steps, validation included, with "
                    "representative inputs: the longest examples decide whether the run holds "
                    "for days.",
                ),
            ),
            (
                text("Précision et batch sur Ampere", "Precision and batch on Ampere"),
                text(
                    "Ampere prend en charge le BF16 : activez-le avec torch.autocast et "
                    "vérifiez-le sur vos métriques face à une exécution de comparaison en TF32. "
                    "L’accumulation des gradients aide à atteindre un batch effectif plus "
                    "grand, mais les poids et les états de l’optimiseur restent en mémoire "
                    "quelle que soit la taille du micro-lot.\n\n"
                    "Avec deux cartes reliées par NVLink ou plusieurs en PCIe, distinguez dans "
                    "vos notes le batch par GPU du batch global.",
                    "Ampere supports BF16: enable it with torch.autocast and check it on your "
                    "metrics against a TF32 comparison run. Gradient accumulation helps reach a "
                    "larger effective batch, but the weights and optimizer states stay in "
                    "memory whatever the micro-batch size.\n\n"
                    "With two cards joined by NVLink or several over PCIe, keep the per-GPU "
                    "batch and the global batch apart in your notes.",
                ),
            ),
            (
                text("Un essai avant plus de capacité", "A trial before more capacity"),
                text(
                    "Un projet qui reste nettement sous 48 Go peut être validé ici à un tarif "
                    "journalier modéré avant de passer à une carte de 80 Go. Si votre pic "
                    "dépasse 48 Go, l’A100 80GB ou le H100 PCIe sont les étapes suivantes ; "
                    "s’il reste sous 20 Go, une RTX 4090 coûte moins cher.",
                    "A project that stays well below 48 GB can be validated here at a moderate "
                    "daily rate before moving to an 80 GB card. If your peak goes beyond 48 GB, "
                    "the A100 80GB or the H100 PCIe are the next steps; if it stays under "
                    "20 GB, an RTX 4090 costs less.",
                ),
            ),
            (
                text("Reprise et reproductibilité", "Resume and reproducibility"),
                text(
                    "Gardez la même graine, les mêmes versions et le même ordre des données "
                    "d’une exécution à l’autre, et notez ce qui a changé quand les résultats "
                    "diffèrent : un nouveau pilote ou une autre version de PyTorch peut "
                    "déplacer les chiffres. Sauvegardez les checkpoints avec l’état de "
                    "l’optimiseur et testez une reprise tôt.\n\n"
                    "Trois jours valident la boucle, sept jours comparent des variantes, trente "
                    "jours portent une série plus longue.",
                    "Keep the same seed, versions and data order from one run to the next, and "
                    "note what changed when results differ: a new driver or another PyTorch "
                    "version can move the numbers. Save checkpoints with the optimizer state "
                    "and test a resume early.\n\n"
                    "Three days validate the loop, seven days compare variants, thirty days "
                    "carry a longer series.",
                ),
            ),
        ],
        "alternatives": [
            (
                "rtx-4090",
                text(
                    "Votre pic reste sous 20 Go : même travail, génération plus récente, "
                    "moins cher.",
                    "Your peak stays under 20 GB: same work, newer generation, lower price.",
                ),
            ),
            (
                "a100-80gb",
                text(
                    "Votre pic dépasse 43 Go environ : 80 Go laissent la marge nécessaire.",
                    "Your peak goes beyond about 43 GB: 80 GB leaves the headroom you need.",
                ),
            ),
            (
                "h100-pcie",
                text(
                    "Plus de 48 Go sur une carte, avec le BF16 et le FP8 de Hopper.",
                    "More than 48 GB on one card, with Hopper's BF16 and FP8.",
                ),
            ),
        ],
    },
    {
        "slug": "rtx-4090",
        "name": "RTX 4090",
        "architecture": "Ada Lovelace",
        "memory_gb": 24,
        "memory_type": "GDDR6X",
        "memory_bandwidth_gbps": 1008,
        "form_factor": "pcie",
        "interconnect": "PCIe 4.0 x16",
        "precisions": "FP32, TF32, BF16, FP16, FP8, INT8",
        "power_watts": 450,
        "units_total": 24,
        "display_order": 60,
        "prices": rates("15.00", "13.50", "11.00"),
        "tagline": text(
            "24 Go sur Ada Lovelace, rapide et économique",
            "24 GB on Ada Lovelace, fast and affordable",
        ),
        "summary": text(
            "1 To/s de bande passante, BF16 et FP8. Idéale pour l’affinage, les adaptateurs et "
            "l’inférence qui tiennent dans 24 Go.",
            "1 TB/s of bandwidth, BF16 and FP8. Ideal for fine-tuning, adapters and inference "
            "that fit in 24 GB.",
        ),
        "advice": [
            (
                text("24 Go : mesurer avant de réduire", "24 GB: measure before you trim"),
                text(
                    "Les 24 Go de GDDR6X conviennent à l’affinage, aux adaptateurs comme LoRA, "
                    "aux modèles de taille moyenne et à l’inférence. Mesurez le pic d’une étape "
                    "complète, validation comprise, avec torch.cuda.max_memory_allocated() : "
                    "les poids peuvent tenir sans peine alors que les activations et les états "
                    "de l’optimiseur débordent.\n\n"
                    "En cas de débordement, agissez sur un seul levier à la fois et mesurez "
                    "après chacun : format des poids, précision de calcul, longueur des "
                    "séquences, taille du micro-lot, recalcul des activations.",
                    "The 24 GB of GDDR6X suit fine-tuning, adapters such as LoRA, mid-size "
                    "models and inference. Measure the peak of a complete step, validation "
                    "included, with torch.cuda.max_memory_allocated(): the weights may fit "
                    "easily while activations and optimizer states overflow.\n\n"
                    "If it overflows, act on one lever at a time and measure after each: weight "
                    "format, compute precision, sequence length, micro-batch size, activation "
                    "checkpointing.",
                ),
            ),
            (
                text("Ada Lovelace et précision mixte", "Ada Lovelace and mixed precision"),
                text(
                    "La RTX 4090 exécute le BF16 et le FP16 sur ses cœurs tensoriels ; "
                    "torch.autocast en BF16 est la porte d’entrée la plus simple. Comparez-le à "
                    "une courte exécution en TF32 sur les mêmes données et la même graine, en "
                    "regardant les métriques de validation et pas seulement la perte.\n\n"
                    "Cette carte n’a pas de NVLink : plusieurs 4090 échangent leurs données par "
                    "PCIe. Cela convient à des exécutions indépendantes ou à un parallélisme de "
                    "données peu synchronisé ; si votre tâche échange beaucoup entre GPU, "
                    "mesurez le passage à l’échelle avant d’en commander plusieurs.",
                    "The RTX 4090 runs BF16 and FP16 on its tensor cores; torch.autocast in "
                    "BF16 is the simplest way in. Compare it with a short TF32 run on the same "
                    "data and seed, looking at validation metrics and not only at the loss.\n\n"
                    "This card has no NVLink: several 4090s exchange data over PCIe. That works "
                    "for independent runs or loosely synchronised data parallelism; if your job "
                    "exchanges a lot between GPUs, measure the scaling before ordering "
                    "several.",
                ),
            ),
            (
                text("4090, 3090 ou A6000 ?", "4090, 3090 or A6000?"),
                text(
                    "La RTX 3090 offre les mêmes 24 Go sur la génération Ampere précédente, "
                    "pour un tarif plus bas : pratique pour un dépôt plus ancien ou pour "
                    "comparer deux générations sur le même code.\n\n"
                    "Si tenir dans 24 Go vous obligeait à raccourcir les exemples et que cela "
                    "fausse votre protocole, prenez plutôt la RTX A6000 et ses 48 Go.",
                    "The RTX 3090 has the same 24 GB on the previous Ampere generation, for a "
                    "lower rate: handy for an older repository or to compare two generations "
                    "on the same code.\n\n"
                    "If fitting in 24 GB would force you to shorten examples and that distorts "
                    "your protocol, take the RTX A6000 and its 48 GB instead.",
                ),
            ),
            (
                text(
                    "Une courte durée pour une exécution reproductible",
                    "A short term for a reproducible run",
                ),
                text(
                    "Trois jours suffisent pour obtenir une exécution reproductible de bout en "
                    "bout : graine fixée, versions notées, checkpoint sauvegardé puis rechargé "
                    "avec quelques sorties vérifiées. Sept jours conviennent à un ensemble de "
                    "variantes sur des données stabilisées ; trente jours, à des répétitions "
                    "une fois la recette validée.",
                    "Three days are enough for a reproducible run from end to end: seed fixed, "
                    "versions written down, a checkpoint saved then reloaded with a few outputs "
                    "checked. Seven days suit a set of variants on stable data; thirty days, "
                    "repetitions once the recipe is validated.",
                ),
            ),
        ],
        "alternatives": [
            (
                "rtx-3090",
                text(
                    "Mêmes 24 Go sur Ampere, moins cher : utile pour un ancien dépôt.",
                    "The same 24 GB on Ampere, for less: useful for an older repository.",
                ),
            ),
            (
                "rtx-a6000",
                text(
                    "Raccourcir vos exemples pour tenir dans 24 Go fausserait votre protocole.",
                    "Shortening your examples to fit in 24 GB would distort your protocol.",
                ),
            ),
        ],
    },
    {
        "slug": "rtx-3090",
        "name": "RTX 3090",
        "architecture": "Ampere",
        "memory_gb": 24,
        "memory_type": "GDDR6X",
        "memory_bandwidth_gbps": 936,
        "form_factor": "pcie",
        "interconnect": "PCIe 4.0 x16 · NVLink ×2",
        "precisions": "FP32, TF32, BF16, FP16, INT8",
        "power_watts": 350,
        "units_total": 12,
        "display_order": 70,
        "prices": rates("11.00", "10.00", "8.00"),
        "tagline": text(
            "24 Go sur Ampere, pour reproduire à petit prix",
            "24 GB on Ampere, to reproduce on a small budget",
        ),
        "summary": text(
            "936 Go/s de bande passante, BF16 et TF32. Pour valider une reproduction ou un "
            "affinage avant d’engager une carte plus grande.",
            "936 GB/s of bandwidth, BF16 and TF32. To validate a reproduction or a fine-tuning "
            "before committing to a larger card.",
        ),
        "advice": [
            (
                text("Réduire le projet, pas la question", "Shrink the project, not the question"),
                text(
                    "Une reproduction n’a pas besoin de tout le corpus dès le premier jour. "
                    "Choisissez un extrait qui garde la diversité utile, toutes les classes et "
                    "quelques cas difficiles, et faites-lui parcourir tout le cycle : lecture, "
                    "entraînement, validation, écriture du checkpoint. Vous saurez que la "
                    "chaîne fonctionne avant d’y consacrer la location entière.\n\n"
                    "Ce petit essai ne prouve pas le résultat final. Notez avant de commencer "
                    "le critère qui vous fera passer au corpus complet ou à une carte plus "
                    "grande, pour ne pas trancher au fil de l’eau.",
                    "A reproduction does not need the whole dataset on day one. Pick an extract "
                    "that keeps the useful diversity, every class and a few hard cases, and run "
                    "the whole cycle on it: reading, training, validation, writing the "
                    "checkpoint. You will know the pipeline works before spending the whole "
                    "rental on it.\n\n"
                    "This small trial does not prove the final result. Before you start, write "
                    "down the criterion that will move you to the full dataset or to a larger "
                    "card, so you do not decide on the fly.",
                ),
            ),
            (
                text("Faire tenir l’essai dans 24 Go", "Fitting the trial in 24 GB"),
                text(
                    "Les leviers sont distincts : stockage des poids, précision de calcul, "
                    "longueur des exemples et micro-lot. N’en changez qu’un entre deux relevés "
                    "de mémoire, sinon vous ne saurez pas lequel a aidé. Un affinage qui "
                    "n’entraîne qu’une petite partie des paramètres tient souvent dans 24 Go ; "
                    "l’entraînement complet du même modèle peut demander plusieurs fois "
                    "plus.\n\n"
                    "Conservez le pic relevé avec les paramètres exacts, validation comprise, "
                    "et testez une reprise depuis un checkpoint en vérifiant quelques sorties "
                    "après rechargement. Le vrai livrable d’une première location : une "
                    "expérience que l’on relance d’une commande, réglages de mémoire et "
                    "données déjà fixés.",
                    "The levers are distinct: how weights are stored, compute precision, "
                    "example length and micro-batch. Change only one between two memory "
                    "readings, otherwise you will not know which one helped. Fine-tuning that "
                    "trains a small share of the parameters often fits in 24 GB; fully training "
                    "the same model can need several times more.\n\n"
                    "Keep the peak you measured with the exact settings, validation included, "
                    "and test a resume from a checkpoint by checking a few outputs after "
                    "reloading. What a first rental should deliver: an experiment you relaunch "
                    "with one command, memory settings and data already pinned down.",
                ),
            ),
            (
                text(
                    "Ampere aujourd’hui, Ada ou 48 Go demain",
                    "Ampere today, Ada or 48 GB tomorrow",
                ),
                text(
                    "Contrôlez d’abord la compatibilité : CUDA, PyTorch et les extensions "
                    "compilées doivent cibler Ampere (sm_86). Un vieux dépôt de recherche se "
                    "diagnostique bien mieux avec des dépendances figées dans un fichier de "
                    "verrouillage.\n\n"
                    "Une fois le résultat obtenu, deux comparaisons ont du sens. La RTX 4090 "
                    "reprend la même capacité de 24 Go sur l’architecture Ada Lovelace, plus "
                    "récente. La RTX A6000 sert un autre objectif : doubler la mémoire, si "
                    "raccourcir les exemples changerait la nature de votre protocole.",
                    "Check compatibility first: CUDA, PyTorch and compiled extensions must "
                    "target Ampere (sm_86). An old research repository is far easier to "
                    "diagnose with dependencies pinned in a lock file.\n\n"
                    "Once you have the result, two comparisons make sense. The RTX 4090 keeps "
                    "the same 24 GB on the newer Ada Lovelace architecture. The RTX A6000 "
                    "serves another purpose: twice the memory, if shortening examples would "
                    "change the nature of your protocol.",
                ),
            ),
            (
                text("3, 7 ou 30 jours, par étapes", "3, 7 or 30 days, step by step"),
                text(
                    "Trois jours pour un essai reproductible du début à la fin ; sept jours "
                    "pour quelques variantes une fois les données stabilisées ; trente jours "
                    "pour multiplier les répétitions après validation de la recette. Rangez "
                    "ensemble graine, versions et checkpoints pour que chaque étape s’appuie "
                    "sur la précédente.",
                    "Three days for a reproducible trial from start to finish; seven days for a "
                    "few variants once the data is stable; thirty days to multiply repetitions "
                    "after the recipe is validated. Keep seed, versions and checkpoints "
                    "together so that each stage builds on the previous one.",
                ),
            ),
        ],
        "alternatives": [
            (
                "rtx-4090",
                text(
                    "Comparer une génération plus récente avec la même capacité de 24 Go.",
                    "Compare a newer generation with the same 24 GB capacity.",
                ),
            ),
            (
                "rtx-a6000",
                text(
                    "Raccourcir les exemples fausserait votre protocole : 48 Go de marge.",
                    "Shortening examples would distort your protocol: 48 GB of room.",
                ),
            ),
        ],
    },
]

# The PyTorch environment is the PyTorch project's CUDA runtime image, its facts as that tag
# ships them (JupyterLab is added on top at start). PLACEHOLDER DIGEST: staff put the digest
# `docker buildx imagetools inspect docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime`
# reports before production; the store starts exactly what the digest names.
PYTORCH_IMAGE = "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:" + "0" * 64
# What the seed keeps in step with this file on every run, like GPU specifications.
ENVIRONMENT_FACT_FIELDS = (
    "image",
    "os_name",
    "python_version",
    "cuda_version",
    "cudnn_version",
    "pytorch_version",
    "jupyterlab_version",
    "cuda_required",
)

ENVIRONMENTS: list[dict] = [
    {
        "slug": "pytorch",
        "requires_details": False,
        "display_order": 10,
        "image": PYTORCH_IMAGE,
        "os_name": "Ubuntu 22.04",
        "python_version": "3.11",
        "cuda_version": "12.4",
        "cudnn_version": "9.1",
        "pytorch_version": "2.5.1",
        "jupyterlab_version": "4.2",
        # CUDA 12.4's runtime wants a driver that supports 12.4 (R550 or later).
        "cuda_required": Decimal("12.4"),
        "name": text("Préparation PyTorch", "PyTorch preparation"),
        "description": text(
            "Un conteneur prêt à entraîner, avec seulement vos GPU : CUDA, cuDNN et PyTorch "
            "dans l’image ci-dessous, vérifiés sur la carte louée. Vous vous connectez en SSH "
            "ou ouvrez JupyterLab et lancez votre code.",
            "A container ready to train, with your GPUs only: CUDA, cuDNN and PyTorch in the "
            "image below, checked on the rented card. You connect over SSH or open JupyterLab "
            "and run your code.",
        ),
    },
    {
        "slug": "custom",
        "requires_details": True,
        "display_order": 20,
        "image": "",
        "os_name": "",
        "python_version": "",
        "cuda_version": "",
        "cudnn_version": "",
        "pytorch_version": "",
        "jupyterlab_version": "",
        "cuda_required": None,
        "name": text("Environnement personnalisé", "Custom environment"),
        "description": text(
            "Votre image de conteneur (registre/nom:étiquette ou nom@sha256:…), ou votre "
            "fichier de prérequis installé au démarrage. Choisissez une image dont la version "
            "de CUDA ne dépasse pas celle des machines de ce modèle.",
            "Your container image (registry/name:tag or name@sha256:…), or your requirements "
            "file installed at start. Choose an image whose CUDA version is no newer than the "
            "machines of this model support.",
        ),
    },
]
