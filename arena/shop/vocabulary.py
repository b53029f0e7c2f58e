"""Hand-written vocabularies for the synthetic catalog (see ``arena.taskpack.synthetic``).

Why a separate data module: the generator's logic stays short and readable,
while this file holds the "shape" of the real Lazada Philippines catalog that
ShoppingBench draws its tasks from -- category paths written like the
official ones ("Media, Music & Books > Musical Instruments > ..."), the
attribute and SKU keys its tasks filter on (``color_family``, ``size``,
``clothing_material``, ``fa_pattern``, ``packaging_type``,
``recommended_age`` ...), value formats such as ``"int:l"`` / ``"eu:30"``,
and price levels in PHP.

Every SKU/attribute key and value here is lower case, because the official
catalog lower-cases them and the scorer compares them verbatim;
:func:`check_vocabulary` enforces that (the tests call it).

Brand names are invented so the catalog never pretends to describe a real
company's product.

It lives in the shop, below the generator, because the problems name products
with the same leaves and labels (``arena.problems.nouns``, ``wording``), and the
problems stand below the catalog builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# --------------------------------------------------------------------------
# Shared value lists
# --------------------------------------------------------------------------

COLORS: tuple[str, ...] = (
    "black",
    "white",
    "blue",
    "pink",
    "green",
    "red",
    "yellow",
    "grey",
    "brown",
    "gold",
    "silver",
    "beige",
    "cream",
    "orange",
    "purple",
    "navy blue",
    "khaki",
    "multicolor",
    "maroon",
    "apricot",
    "dark blue",
    "light blue",
    "army green",
)
APPAREL_SIZES: tuple[str, ...] = (
    "int:xs",
    "int:s",
    "int:m",
    "int:l",
    "int:xl",
    "int:2xl",
    "int:3xl",
    "int:4xl",
    "int: one size",
)
JEANS_SIZES: tuple[str, ...] = tuple(f"eu:{n}" for n in range(25, 37))
SHOE_SIZES: tuple[str, ...] = tuple(f"eu:{n}" for n in range(35, 46)) + tuple(f"us:{n}" for n in range(5, 12))
PHONE_MODELS: tuple[str, ...] = (
    "iphone 15 pro max",
    "iphone 14",
    "iphone 13",
    "iphone 12 pro",
    "samsung galaxy a54",
    "samsung galaxy a15",
    "redmi note 13",
    "poco x6 pro",
    "oppo a78",
    "oppo reno 11",
    "vivo y36",
    "realme c55",
    "infinix hot 40",
    "tecno spark 20",
    "huawei nova 11",
)
PACK_QTY: tuple[str, ...] = ("1pc", "2pcs", "3pcs", "5pcs", "10pcs", "set of 3", "pack of 6", "buy 1 take 1")

GENERAL_ADJECTIVES: tuple[str, ...] = (
    "new",
    "original",
    "premium",
    "high quality",
    "hot sale",
    "ready stock",
    "authentic",
    "best seller",
    "2024 new",
    "korean style",
    "heavy duty",
    "affordable",
    "imported",
    "durable",
    "trendy",
)
PROMO_TAGS: tuple[str, ...] = (
    "[ready stock]",
    "[cod]",
    "[local seller]",
    "[sale]",
    "[free gift]",
    "[original]",
    "【ready stock】",
    "✨hot sale✨",
)

# Attribute keys whose display label differs from the key (descriptions,
# specification text); the rest show as the key with spaces.
LABELS: Mapping[str, str] = {
    "fa_pattern": "pattern",
    "fa_general_styles": "style",
    "fa_season": "season",
    "clothing_material": "material",
    "color_family": "color",
    "isbn_issn": "isbn/issn",
    "units_hb": "units",
    "country_origin_hb": "country of origin",
    "storage_type_gr": "storage type",
    "m_top_neckline": "neckline",
    "jeans_fit_type": "fit type",
    "top_fit_types": "fit",
    "size_stuffed_toys": "size",
    "types_of_herbs_&_spices": "type",
}

OPENERS: tuple[str, ...] = (
    "100% brand new and high quality!",
    "Welcome to our store!",
    "Ready stock, ships within 24 hours from Metro Manila.",
    "We are a local seller in the Philippines with fast delivery.",
    "Thank you for visiting our shop!",
    "Product Information:",
    "Hot item this season!",
)
CLOSERS: tuple[str, ...] = (
    "If you have any questions, please feel free to contact us.",
    "Please allow 1-3 cm differences due to manual measurement.",
    "Actual colors may vary slightly due to monitor settings.",
    "Our shop provides 7 days replacement for damaged items.",
    "Leave us a 5-star review with photos and get a voucher for your next order!",
    "Follow our store for more new arrivals and vouchers.",
    "Cash on delivery available nationwide.",
    "",
)
SPEC_EXTRAS: tuple[str, ...] = (
    "warranty type:no warranty",
    "condition:new",
    "warranty type:local supplier warranty;warranty period:7 days",
    "warranty type:seller warranty;warranty period:1 month",
)

# Syllables for shop-level house brands ("Speed", "Duz", "Arborea" in the
# official data look like this); combined by the seeded generator.
BRAND_HEADS: tuple[str, ...] = (
    "ar",
    "bo",
    "ka",
    "lu",
    "mi",
    "zen",
    "vel",
    "tri",
    "no",
    "sa",
    "du",
    "pri",
    "mo",
    "ra",
    "ti",
    "cha",
    "ki",
    "de",
    "lo",
    "ve",
    "ha",
    "yu",
    "ba",
    "fi",
)
BRAND_TAILS: tuple[str, ...] = (
    "rea",
    "tex",
    "ly",
    "ma",
    "on",
    "ix",
    "co",
    "ra",
    "vo",
    "na",
    "z",
    "ko",
    "pro",
    "mart",
    "shop",
    "lab",
    "ry",
    "sa",
    "do",
    "x",
)
GENERIC_BRANDS: tuple[str, ...] = ("OEM", "No Brand", "Generic")

# --------------------------------------------------------------------------
# The category tree
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """One leaf category and everything needed to invent products in it.

    ``sku`` maps each SKU key to its value vocabulary; ``schemes`` lists the
    key combinations a product's options use (one or two keys, as in the
    official data). ``price`` is the (median PHP, log-sigma) of a log-normal
    spread. ``uses`` fill "for ..." phrases in titles. ``features`` are
    description sentences; ``{noun}`` is replaced by the product noun.
    ``weight`` is the leaf's relative share of shops.
    """

    path: str
    nouns: tuple[str, ...]
    attributes: Mapping[str, tuple[str, ...]]
    sku: Mapping[str, tuple[str, ...]]
    price: tuple[float, float]
    adjectives: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    schemes: tuple[tuple[str, ...], ...] = ()
    weight: float = 1.0
    brands: tuple[str, ...] = field(default=())


def _m(*parts: Mapping[str, tuple[str, ...]], **extra: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Merge attribute dicts (later wins) -- leaves share groups of keys."""
    out: dict[str, tuple[str, ...]] = {}
    for part in parts:
        out.update(part)
    out.update(extra)
    return out


FASHION_ATTRS = {
    "clothing_material": (
        "cotton",
        "polyester",
        "cotton spandex",
        "denim",
        "linen",
        "nylon",
        "knits",
        "rayon",
        "chiffon",
        "silk",
    ),
    "fa_pattern": (
        "plain",
        "graphic print",
        "floral",
        "embroidery",
        "stripe",
        "cartoon",
        "animal print",
        "plaid",
        "letter print",
    ),
    "fa_general_styles": (
        "casual",
        "basic",
        "korean",
        "sport & street",
        "vintage",
        "workwear",
        "streetwear",
        "elegant",
    ),
    "fa_season": ("summer", "all seasons", "spring", "autumn", "winter"),
    "occasion": ("casual", "casual wear", "formal", "work", "party", "daily"),
    "size_class": ("regular", "plus size", "petite"),
}
SHOE_ATTRS = {
    "material_filter": ("rubber", "leather", "eva", "canvas", "pu", "mesh", "pvc"),
    "fa_pattern": ("plain", "graphic print", "stripe", "color block"),
    "occasion": ("casual", "sports", "daily", "formal"),
    "is_unisex": ("unisex",),
    "heel_height": ("flat", "low (1-3cm)", "mid (3-5cm)"),
}
ELECTRONIC_ATTRS = {
    "warranty_type": (
        "no warranty",
        "local supplier warranty",
        "local manufacturer warranty",
        "international manufacturer warranty",
    ),
    "plug_type": ("type c", "universal", "us", "lightning", "micro usb"),
    "input_voltage": ("5v", "12v", "220v", "100-240 v"),
}
BEAUTY_ATTRS = {
    "skin_type": ("normal", "all skin types", "oily", "dry", "sensitive", "combination"),
    "brand_classification": ("premium", "dermacare", "mass", "masstige"),
    "country_origin_hb": ("philippines", "korea", "japan", "china", "usa", "thailand"),
    "travel_size": ("regular size", "travel size"),
    "units_hb": ("single item", "multi-pack"),
}
GROCERY_ATTRS = {
    "packaging_type": ("bag", "bottle", "box", "pouch", "refill pouch", "pack", "can", "jar"),
    "pack_type": ("single", "multipack", "carton", "bundle"),
    "dietary_needs": ("organic", "halal", "healthier choice", "vegetarian", "low fat", "sugar free"),
    "storage_type_gr": ("cupboard", "chilled", "frozen"),
    "country_origin_hb": ("philippines", "usa", "japan", "korea", "thailand", "vietnam"),
}
TOY_ATTRS = {
    "recommended_age": (
        "0-12 months",
        "18-24 months",
        "2-3 years",
        "3-4 years",
        "3 years and above",
        "5-7 years",
        "8 years and above",
        "14 years and above",
        "kids",
    ),
    "recommended_gender": ("unisex", "boys", "girls"),
    "interest": (
        "children development",
        "construction",
        "animals & nature",
        "fantasy & sci-fi",
        "collection",
        "learning",
        "vehicles",
    ),
    "material": ("plastic", "abs plastic", "plush", "wood", "cotton", "silicone"),
}
HOME_ATTRS = {
    "material": (
        "plastic",
        "stainless steel",
        "wood",
        "glass",
        "ceramic",
        "bamboo",
        "silicone",
        "polypropylene (pp)",
        "metal",
    ),
    "style": ("modern", "minimalist", "nordic", "korean", "traditional", "industrial", "rustic", "contemporary"),
    "pattern": ("plain", "floral", "geometric", "stripe", "cartoon", "abstract"),
    "warranty_type": ("no warranty", "local supplier warranty"),
}
SPORT_ATTRS = {
    "sports_material": ("mesh", "dri-fit", "polyester", "nylon", "rubber", "pu", "eva", "carbon fiber", "aluminum"),
    "activity_type": ("running", "basketball", "cycling", "camping & hiking", "yoga", "fitness", "fishing", "swimming"),
    "recommended_gender": ("unisex", "male", "female"),
}
AUTO_ATTRS = {
    "make": ("universal", "toyota", "honda", "mitsubishi", "ford", "nissan", "hyundai", "suzuki", "mazda"),
    "warranty_type": ("no warranty", "local supplier warranty", "local manufacturer warranty"),
    "material": ("rubber", "pvc", "leather", "plastic", "aluminum alloy", "stainless steel"),
}
MOTO_ATTRS = {
    "motorcycle_make": ("honda", "yamaha", "suzuki", "kawasaki", "universal", "motorstar", "rusi"),
    "motorcycle_model": (
        "universal",
        "honda click 125i",
        "yamaha mio i 125",
        "sniper 155",
        "honda adv 160",
        "yamaha nmax",
        "raider 150",
        "honda beat",
    ),
    "warranty_type": ("no warranty", "local supplier warranty"),
}
PET_ATTRS = {
    "pet_size": ("small", "medium", "large", "all sizes"),
    "pet_life_stage": ("puppy", "kitten", "adult", "senior", "all life stages"),
    "packaging_type": ("bag", "pouch", "box", "can", "sack"),
}
TOOL_ATTRS = {
    "material": (
        "carbon steel",
        "stainless steel",
        "chrome vanadium",
        "aluminum alloy",
        "plastic",
        "rubber",
        "brass",
        "cast iron",
    ),
    "warranty_type": ("no warranty", "local supplier warranty", "local manufacturer warranty"),
    "power_tool_material_uses": ("wood", "metal", "concrete", "multi-purpose"),
}
STATIONERY_ATTRS = {
    "material": ("paper", "plastic", "metal", "kraft paper", "pu leather"),
    "pack_type": ("single", "multipack", "box"),
    "recommended_age": ("kids", "8 years and above", "14 years and above"),
}
BABY_ATTRS = {
    "baby_material": ("cotton", "100% cotton", "polyester", "silicone", "pp", "bamboo fiber"),
    "recommended_age": ("0-6 months", "0-12 months", "6-12 months", "12-24 months", "2-3 years"),
    "recommended_gender": ("unisex", "baby boys", "baby girls"),
}
BAG_ATTRS = {
    "material": ("canvas", "nylon", "pu leather", "polyester", "leather", "oxford cloth"),
    "pattern": ("plain", "floral", "cartoon", "letter print", "plaid"),
    "style": ("casual", "korean", "vintage", "business", "sporty"),
    "closure_type": ("zipper", "magnetic", "drawstring", "buckle"),
}
BOOK_ATTRS = {
    "language": ("english", "filipino", "tagalog", "bilingual"),
    "book_format": ("paperback", "hardcover", "board book"),
    "publisher": ("bayani press", "lakbay books", "pahina publishing", "isla house", "liwanag media"),
}
MUSIC_ATTRS = {
    "music_accessories_function": ("tuning", "practice", "performance", "maintenance", "recording"),
    "material": ("b20 cast bronze", "brass", "wood", "carbon fiber", "nylon", "steel", "rosewood", "mahogany"),
    "warranty_type": ("no warranty", "local supplier warranty"),
}

B_FASHION = (
    "Urban Thread",
    "Kaya Denim",
    "Bella Moda",
    "Manila Basics",
    "Northpeak",
    "Seoul Studio",
    "Lunara",
    "Tribu Wear",
    "Ivory Lane",
    "Cotton Isle",
)
B_SHOES = ("Stridex", "Paseo", "Kalye Kicks", "Aero Step", "Solea", "Runwise", "Tsinelas Co")
B_ACC = ("Orion Time", "Goldleaf", "Lumi Jewel", "Tempora", "Aurelle", "Capstone", "Kislap")
B_ELEC = ("Voltix", "Sonara", "Pulseon", "Arcbeat", "Nexi", "Tecra", "Boltmax", "Ampli", "Zentek", "Linkor")
B_HOME = ("Casa Bella", "Kusina Pro", "Homely", "Nestwell", "Bahay Living", "Oakridge", "Crestware", "Tidyhaus")
B_APPL = ("Breezo", "Crispa", "Kelvo", "Windra", "Heatwave", "Kusina Pro", "Ampli")
B_BEAUTY = (
    "Dermaluxe",
    "Glowlab",
    "Pure Petal",
    "Skinnova",
    "Luminesse",
    "Aloha Bloom",
    "Velvet Muse",
    "Hydra Kiss",
    "PSPH Beauty",
)
B_TOYS = ("Blockcraft", "Tiny Titans", "Playnest", "Brickwell", "Funzone", "Kiddo Lab", "DUZ")
B_MUSIC = ("Arborea", "Heart String", "Tonewood", "Resona", "Harmonia", "Crescendo")
B_BOOKS = ("Bayani Press", "Lakbay Books", "Pahina Publishing", "Isla House", "Liwanag Media")
B_GROCERY = (
    "Hyco",
    "Prima Sabor",
    "Kusina Gold",
    "Tanim Farms",
    "Golden Harvest",
    "Isla Brew",
    "Sarap Snacks",
    "Mabuhay Foods",
)
B_SUPP = ("Musclecore", "Vitalis", "Ironpeak Nutrition", "Herbanica", "Nutrilife")
B_SPORTS = ("Peakform", "Trailhawk", "Ironcore", "Aquafin", "Velocita", "Summit Gear")
B_AUTO = ("Motoria", "Roadmax", "Torq", "Gearline", "Autopro", "Speedway", "Miris")
B_PETS = ("Pawsome", "Whisker Co", "Barkley", "Purrfect", "Happy Tails")
B_TOOLS = ("Ironhand", "Toolmaster", "Bosko", "Steelgrip", "Fixit", "Voltcraft Pro", "Speed")
B_STAT = ("Papelito", "Inkwell", "Scriba", "Notara", "Sharpline", "Calcu")
B_BABY = ("Bunnybee", "Little Sprout", "Snuggle Up", "Tiny Steps", "Mommy's Choice")
B_BAGS = ("Wanderlust", "Packwell", "Kalakbay", "Carryall", "Urban Nomad")

W = "Fashion > Women's Clothing"
M = "Fashion > Men's Clothing"

LEAVES: tuple[Leaf, ...] = (
    # ---------------------------------------------------------------- fashion
    Leaf(
        f"{W} > Jeans",
        ("jeans", "denim pants", "wide leg jeans", "mom jeans", "skinny jeans"),
        _m(
            FASHION_ATTRS,
            clothing_material=("denim", "cotton spandex", "cotton"),
            jeans_fit_type=("baggy fit", "straight fit", "skinny fit", "wide leg", "slim fit"),
            waist_type=("high", "mid", "low", "elasticated waist"),
        ),
        {"size": JEANS_SIZES, "color_family": ("light blue", "dark blue", "black", "blue", "grey", "white")},
        (380, 0.55),
        ("baggy", "high waist", "vintage", "straight", "stretchable", "american retro"),
        ("women", "ladies", "girls"),
        (
            "Stretchable {noun} that keeps its shape after washing.",
            "High waist cut that flatters every body type.",
            "Pairs well with crop tops and sneakers.",
        ),
        weight=3.0,
        brands=B_FASHION,
    ),
    Leaf(
        f"{W} > Dresses",
        ("dress", "maxi dress", "midi dress", "bodycon dress", "sundress"),
        _m(
            FASHION_ATTRS,
            collar_type=("v-neck", "round-neck", "square neck", "off shoulder", "halter neck"),
            sleeves=("short sleeve", "sleeveless", "long sleeve", "puff sleeve"),
        ),
        {"size": APPAREL_SIZES, "color_family": COLORS},
        (420, 0.6),
        ("elegant", "floral", "korean", "summer", "sexy", "casual"),
        ("women", "ladies", "party", "beach"),
        (
            "Lightweight and flowy {noun}, perfect for summer.",
            "Soft fabric that is comfortable all day.",
            "Can be dressed up or down for any occasion.",
        ),
        weight=2.5,
        brands=B_FASHION,
    ),
    Leaf(
        "Fashion > Men's Clothing > T-Shirts & Tanks",
        ("t-shirt", "tshirt", "oversized tee", "tank top", "polo shirt"),
        _m(
            FASHION_ATTRS,
            sleeves=("short sleeve", "sleeveless", "long sleeve"),
            m_top_neckline=("crew neck", "v-neck", "o-neck", "polo collar"),
            top_fit_types=("regular", "loose", "oversized", "slim"),
        ),
        {"size": APPAREL_SIZES, "color_family": COLORS},
        (250, 0.55),
        ("oversized", "cotton", "plain", "graphic", "streetwear", "breathable"),
        ("men", "boys", "couple", "gym"),
        (
            "Made of soft breathable cotton for everyday wear.",
            "Print does not fade or crack after washing.",
            "Oversized fit, please check the size chart.",
        ),
        weight=3.0,
        brands=B_FASHION,
    ),
    Leaf(
        f"{M} > Hoodies & Sweatshirts",
        ("hoodie", "sweatshirt", "zip up jacket", "pullover hoodie"),
        _m(FASHION_ATTRS, m_top_neckline=("hooded", "crew neck"), top_fit_types=("regular", "oversized")),
        {"size": APPAREL_SIZES, "color_family": COLORS},
        (480, 0.55),
        ("oversized", "korean", "fleece", "unisex", "thick", "warm"),
        ("men", "women", "couple"),
        ("Warm fleece lining for cold weather.", "Kangaroo pocket and adjustable drawstring hood."),
        weight=1.5,
        brands=B_FASHION,
    ),
    Leaf(
        "Fashion > Men's Shoes > Sneakers",
        ("sneakers", "running shoes", "rubber shoes", "canvas shoes", "high cut shoes"),
        _m(SHOE_ATTRS),
        {"size": SHOE_SIZES, "color_family": ("black", "white", "grey", "blue", "black white", "all black", "beige")},
        (850, 0.75),
        ("lightweight", "breathable", "non-slip", "korean", "sports", "casual"),
        ("men", "women", "students", "running"),
        ("Cushioned sole absorbs shock while walking.", "Breathable upper keeps feet dry.", "Non-slip rubber outsole."),
        weight=2.0,
        brands=B_SHOES,
    ),
    Leaf(
        "Fashion > Women's Shoes > House Slippers",
        ("slippers", "house slippers", "slides", "flip flops", "sandals"),
        _m(SHOE_ATTRS, material_filter=("eva", "rubber", "pvc", "cotton", "plush")),
        {"size": ("eu:36-37", "eu:38-39", "eu:40-41", "eu:42-43", "eu:44-45"), "color_family": COLORS},
        (160, 0.55),
        ("soft", "thick sole", "anti-slip", "cute", "cloud", "indoor"),
        ("women", "men", "home", "bathroom"),
        ("Thick soft sole feels like walking on clouds.", "Waterproof and easy to clean."),
        weight=2.0,
        brands=B_SHOES,
    ),
    Leaf(
        "Fashion Accessories > Watches > Sports Watches",
        ("watch", "sports watch", "digital watch", "wrist watch"),
        {
            "movement": ("quartz", "digital", "automatic", "mechanical"),
            "strap": ("silicone", "stainless steel", "leather", "nylon"),
            "dial_glass": ("mineral glass", "sapphire", "acrylic"),
            "case_shape": ("round", "square", "tonneau"),
            "watch_dial_size": ("38mm", "40mm", "42mm", "44mm", "46mm"),
            "recommended_gender": ("male", "female", "unisex"),
            "water_resistance": ("30m", "50m", "100m"),
        },
        {"color_family": ("black", "silver", "gold", "rose gold", "blue", "green", "black gold")},
        (650, 0.9),
        ("waterproof", "luminous", "shockproof", "classic", "luxury", "minimalist"),
        ("men", "women", "students", "sports"),
        ("Water resistant for daily wear and light swimming.", "Luminous hands for easy reading at night."),
        weight=1.5,
        brands=B_ACC,
    ),
    Leaf(
        "Fashion Accessories > Jewellery > Necklaces",
        ("necklace", "pendant necklace", "chain necklace", "choker"),
        {
            "material_type": (
                "stainless steel",
                "sterling silver 925",
                "gold plated",
                "zinc alloy",
                "titanium steel",
                "pearl",
            ),
            "main_stone": ("no stones", "cubic zirconia", "rhinestone", "pearl", "jade", "crystal"),
            "recommended_gender": ("female", "male", "unisex"),
            "style": ("minimalist", "korean", "vintage", "hip hop", "classic"),
        },
        {"color_family": ("gold", "silver", "rose gold", "black"), "length": ("40cm", "45cm", "50cm", "60cm")},
        (180, 0.8),
        ("non-tarnish", "hypoallergenic", "dainty", "elegant", "couple", "lucky"),
        ("women", "men", "girlfriend", "gift"),
        ("Hypoallergenic and does not tarnish.", "Comes with a free gift box."),
        weight=1.5,
        brands=B_ACC,
    ),
    Leaf(
        "Fashion Accessories > Accessories > Headwear",
        ("cap", "bucket hat", "baseball cap", "beanie", "sun visor"),
        {
            "hats_style": ("baseball cap", "bucket hat", "beanie", "trucker hat", "visor"),
            "material": ("cotton", "polyester", "canvas", "wool", "straw"),
            "fa_pattern": ("plain", "embroidery", "letter print", "graphic print"),
            "recommended_gender": ("unisex", "male", "female"),
        },
        {"color_family": COLORS},
        (150, 0.6),
        ("adjustable", "embroidered", "unisex", "korean", "outdoor", "sun protection"),
        ("men", "women", "outdoor", "travel"),
        ("Adjustable strap fits most head sizes.",),
        weight=1.2,
        brands=B_FASHION,
    ),
    # ----------------------------------------------------------- electronics
    Leaf(
        "Electronics > Audio > Headphones",
        ("headphones", "wireless earbuds", "bluetooth headset", "earphones", "tws earbuds"),
        _m(
            ELECTRONIC_ATTRS,
            connectivity=("bluetooth 5.3", "bluetooth 5.0", "wired 3.5mm", "type c"),
            headphone_features=("noise cancelling", "built-in mic", "water resistant", "touch control", "low latency"),
        ),
        {"color_family": ("black", "white", "blue", "pink", "green", "purple")},
        (650, 1.0),
        ("wireless", "noise cancelling", "bass boost", "gaming", "sports", "hifi"),
        ("iphone", "android", "gaming", "running"),
        (
            "Up to 30 hours playtime with the charging case.",
            "Crystal clear calls with the built-in microphone.",
            "Low latency mode for gaming.",
        ),
        weight=2.0,
        brands=B_ELEC,
    ),
    Leaf(
        "Electronics > Audio > Portable Speakers",
        ("bluetooth speaker", "portable speaker", "karaoke speaker", "soundbar"),
        _m(
            ELECTRONIC_ATTRS,
            connectivity=("bluetooth 5.3", "bluetooth 5.0", "aux", "usb"),
            power_consumption=("1-500", "500-1000", "1000-2000", "5000 and up"),
        ),
        {"color_family": ("black", "blue", "red", "grey", "camouflage")},
        (900, 0.9),
        ("waterproof", "bass", "rgb", "outdoor", "mini", "wireless"),
        ("outdoor", "party", "karaoke", "home"),
        ("Powerful bass and 360 degree sound.", "IPX5 waterproof, take it to the beach."),
        weight=1.2,
        brands=B_ELEC,
    ),
    Leaf(
        "Electronics Parts & Accessories > Mobile & Tablet Accessories > Cases & Covers",
        ("phone case", "case", "cover", "magsafe case", "flip cover"),
        {
            "case_material": ("tpu", "silicone", "pc", "liquid silicone", "leather", "tempered glass"),
            "case_function": (
                "shockproof",
                "built-in stand",
                "dirt resistant",
                "anti-fall",
                "waterproof",
                "camera protection",
            ),
            "brand_compatibility": ("apple", "samsung", "xiaomi", "oppo", "vivo", "realme", "infinix", "huawei"),
            "warranty_type": ("no warranty",),
        },
        {"model": PHONE_MODELS, "color_family": ("black", "clear", "pink", "blue", "purple", "green")},
        (120, 0.6),
        ("shockproof", "clear", "matte", "cute", "transparent", "candy color"),
        ("iphone", "samsung", "oppo", "vivo", "xiaomi"),
        ("Raised edges protect the camera and screen.", "Precise cutouts for all ports and buttons."),
        schemes=(("model",), ("model", "color_family"), ("color_family",)),
        weight=3.0,
        brands=B_ELEC,
    ),
    Leaf(
        "Electronics Parts & Accessories > Mobile & Tablet Accessories > Chargers & Cables",
        ("charger", "fast charger", "usb c cable", "charging cable", "power adapter"),
        _m(
            ELECTRONIC_ATTRS, cable_length=("1m", "1.5m", "2m", "3m"), power_output=("20w", "33w", "45w", "65w", "120w")
        ),
        {
            "variation": ("1m", "2m", "cable only", "charger only", "charger + cable"),
            "color_family": ("black", "white"),
        },
        (250, 0.7),
        ("fast charging", "braided", "original", "super fast", "pd", "durable"),
        ("iphone", "samsung", "android", "ipad", "laptop"),
        ("Supports fast charging for compatible devices.", "Braided nylon cable resists tangles and bending."),
        weight=2.0,
        brands=B_ELEC,
    ),
    Leaf(
        "Electronics > Smart Wearables > Smartwatches",
        ("smart watch", "smartwatch", "fitness tracker", "smart band"),
        _m(
            ELECTRONIC_ATTRS,
            screen_size=("1.39 inch", "1.85 inch", "1.96 inch", "2.01 inch"),
            watch_features=("heart rate monitor", "blood oxygen", "call function", "sleep tracking", "gps"),
        ),
        {"color_family": ("black", "silver", "pink", "gold", "grey"), "strap": ("silicone", "metal", "nylon")},
        (1100, 0.8),
        ("waterproof", "bluetooth call", "amoled", "fitness", "sports", "long battery"),
        ("android", "iphone", "men", "women"),
        ("Tracks heart rate, blood oxygen and sleep.", "Receive call and message notifications on your wrist."),
        weight=1.2,
        brands=B_ELEC,
    ),
    # ----------------------------------------------------------------- home
    Leaf(
        "Home & Living > Kitchen > Cookware",
        ("frying pan", "cooking pot", "wok", "casserole", "cookware set", "sauce pan"),
        _m(
            HOME_ATTRS,
            cookware_material=("stainless steel", "cast iron", "aluminum", "granite coating", "ceramic", "non-stick"),
            diameter=("20cm", "24cm", "26cm", "28cm", "30cm"),
        ),
        {
            "size": ("20cm", "24cm", "26cm", "28cm", "30cm", "32cm"),
            "color_family": ("black", "grey", "silver", "pink", "cream", "green"),
        },
        (650, 0.75),
        ("non-stick", "induction", "granite", "heavy duty", "korean", "deep"),
        ("kitchen", "home", "induction cooker", "gas stove"),
        (
            "Non-stick coating for easy cooking and cleaning.",
            "Works on gas stoves and induction cookers.",
            "Heat-resistant handle stays cool.",
        ),
        weight=1.8,
        brands=B_HOME,
    ),
    Leaf(
        "Kitchenware & Tableware > Drinkware > Tumblers",
        ("tumbler", "water bottle", "insulated tumbler", "coffee mug", "aqua flask"),
        _m(
            HOME_ATTRS,
            material=("stainless steel", "plastic", "glass", "tritan"),
            capacity=("350ml", "500ml", "750ml", "1l", "1.2l", "40oz"),
        ),
        {"color_family": COLORS, "size": ("12oz", "20oz", "30oz", "40oz")},
        (300, 0.7),
        ("insulated", "leak proof", "vacuum", "aesthetic", "hot and cold", "large capacity"),
        ("office", "gym", "school", "travel"),
        ("Keeps drinks cold for 24 hours and hot for 12 hours.", "Leak-proof lid with straw."),
        weight=1.5,
        brands=B_HOME,
    ),
    Leaf(
        "Home & Living > Bedding > Bedsheets",
        ("bedsheet set", "fitted sheet", "pillow case", "bed sheet", "comforter"),
        _m(
            HOME_ATTRS,
            material=("cotton", "microfiber", "canadian cotton", "polyester", "bamboo"),
            bed_size=("single", "double", "queen", "king", "family size"),
        ),
        {"size": ("single 36x75", "double 54x75", "queen 60x75", "king 72x75"), "color_family": COLORS},
        (450, 0.6),
        ("soft", "korean", "3 in 1", "4 in 1", "garterized", "cooling"),
        ("bedroom", "home", "dorm"),
        ("Soft and breathable for a good night's sleep.", "Garterized all around for a snug fit."),
        weight=1.2,
        brands=B_HOME,
    ),
    Leaf(
        "Lighting & Décor > Home Décor > Wall Stickers & Decals",
        ("wall sticker", "wallpaper", "fridge magnet", "wall decal", "3d foam sticker"),
        _m(
            HOME_ATTRS,
            material=("pvc", "vinyl", "foam", "resin", "paper"),
            style=("modern", "world travel souvenir", "cartoon", "nordic", "floral"),
        ),
        {"color_family": ("white", "wood grain", "marble", "floral", "brick", "grey")},
        (120, 0.75),
        ("waterproof", "self adhesive", "removable", "3d", "aesthetic", "peel and stick"),
        ("bedroom", "living room", "kitchen", "kids room"),
        ("Self-adhesive, just peel and stick.", "Waterproof and easy to wipe clean."),
        weight=1.2,
        brands=B_HOME,
    ),
    Leaf(
        "Home & Living > Storage & Organisation > Storage Boxes",
        ("storage box", "organizer", "drawer organizer", "storage bin", "shoe box"),
        _m(HOME_ATTRS, material=("plastic", "polypropylene (pp)", "fabric", "acrylic", "bamboo")),
        {
            "size": ("small", "medium", "large", "extra large"),
            "color_family": ("white", "clear", "grey", "beige", "pink", "blue"),
        },
        (250, 0.7),
        ("stackable", "foldable", "transparent", "large capacity", "with lid", "space saving"),
        ("closet", "kitchen", "office", "makeup"),
        ("Stackable design saves space.", "Sturdy and easy to clean."),
        weight=1.2,
        brands=B_HOME,
    ),
    # ----------------------------------------------------------- appliances
    Leaf(
        "Home Appliances > Small Kitchen Appliances > Air Fryers",
        ("air fryer", "electric oven", "digital air fryer", "air fryer oven"),
        _m(
            ELECTRONIC_ATTRS,
            input_voltage=("220v",),
            plug_type=("2 pin", "3 pin", "universal"),
            capacity=("4l", "5l", "6l", "8l", "12l"),
            power_consumption=("1000-2000", "500-1000"),
        ),
        {"size": ("4l", "5l", "6l", "8l", "12l"), "color_family": ("black", "white", "cream", "green")},
        (2600, 0.5),
        ("digital", "large capacity", "oil free", "touch screen", "dual basket", "smart"),
        ("kitchen", "family", "home"),
        ("Cook with up to 85% less oil.", "Digital touch panel with preset menus."),
        weight=1.0,
        brands=B_APPL,
    ),
    Leaf(
        "Home Appliances > Cooling & Air Treatment > Electric Fans",
        ("electric fan", "stand fan", "desk fan", "rechargeable fan", "wall fan"),
        _m(ELECTRONIC_ATTRS, input_voltage=("220v", "5v"), fan_size=("8 inch", "12 inch", "16 inch", "18 inch")),
        {"size": ("8 inch", "12 inch", "16 inch", "18 inch"), "color_family": ("white", "black", "blue", "pink")},
        (1100, 0.7),
        ("rechargeable", "silent", "turbo", "portable", "remote control", "energy saving"),
        ("bedroom", "office", "outdoor", "camping"),
        ("Three speed settings with quiet motor.", "Energy saving and long lasting."),
        weight=1.0,
        brands=B_APPL,
    ),
    # --------------------------------------------------------------- beauty
    Leaf(
        "Health & Beauty > Skincare > Toner",
        ("toner", "facial toner", "rejuvenating toner", "exfoliating toner", "essence toner"),
        _m(
            BEAUTY_ATTRS,
            body_benefits=("moisturizing", "whitening", "anti-acne", "brightening", "pore minimizing"),
            ingredient_preference=(
                "niacinamide",
                "glycolic acid",
                "aloe vera",
                "hyaluronic acid",
                "centella",
                "paraben-free",
            ),
            volume=("50ml", "100ml", "150ml", "200ml", "500ml"),
        ),
        {"volume": ("50ml", "100ml", "150ml", "200ml"), "variation": ("toner only", "set", "with freebies")},
        (350, 0.7),
        ("rejuvenating", "brightening", "gentle", "korean", "big", "hydrating"),
        ("face", "oily skin", "sensitive skin", "acne"),
        ("Gently removes dead skin cells and impurities.", "Suitable for all skin types.", "FDA approved."),
        weight=2.0,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Skincare > Sunscreen",
        ("sunscreen", "sunblock", "sun serum", "uv gel", "sunscreen spray"),
        _m(
            BEAUTY_ATTRS,
            spf=("spf30", "spf50", "spf50+"),
            ingredient_preference=("oil-free", "fragrance-free", "spf50+", "vitamins"),
        ),
        {"volume": ("30ml", "50ml", "100ml")},
        (380, 0.6),
        ("lightweight", "non-greasy", "waterproof", "tinted", "daily", "korean"),
        ("face", "body", "beach", "kids"),
        ("Broad spectrum UVA/UVB protection.", "Lightweight and no white cast."),
        weight=1.2,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Makeup > Lipstick",
        ("lipstick", "lip tint", "lip gloss", "matte lipstick", "lip and cheek tint"),
        _m(
            BEAUTY_ATTRS,
            finish=("matte", "glossy", "velvet", "satin"),
            special_feature=("long lasting", "waterproof", "transfer proof", "moisturizing"),
        ),
        {
            "color_family": ("red", "nude", "pink", "coral", "maroon", "brown", "peach", "plum"),
            "variation": ("01", "02", "03", "04", "05", "06"),
        },
        (230, 0.7),
        ("matte", "long lasting", "waterproof", "velvet", "korean", "non-transfer"),
        ("women", "girls", "daily"),
        ("Highly pigmented color in one swipe.", "Long lasting and transfer proof."),
        weight=1.5,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Hair Care > Shampoo",
        ("shampoo", "conditioner", "hair treatment", "hair mask", "keratin shampoo"),
        _m(
            BEAUTY_ATTRS,
            hair_type=("all hair types", "damaged", "oily", "dry", "color treated"),
            ingredient_preference=("keratin", "argan oil", "castor oil", "sulfate free", "collagen"),
        ),
        {"volume": ("200ml", "400ml", "500ml", "1l"), "scent": ("floral", "fruity", "lavender", "fresh", "unscented")},
        (260, 0.6),
        ("anti-dandruff", "hair fall", "keratin", "moisturizing", "salon", "smoothing"),
        ("women", "men", "damaged hair", "dry hair"),
        ("Repairs damaged hair and reduces hair fall.", "Leaves hair soft and manageable."),
        weight=1.5,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Fragrances > Women",
        ("perfume", "eau de parfum", "body mist", "oil based perfume", "cologne"),
        _m(
            BEAUTY_ATTRS,
            fragrance_family=("floral", "fruity", "woody", "oriental", "fresh"),
            volume=("30ml", "50ml", "85ml", "100ml"),
        ),
        {"volume": ("30ml", "50ml", "85ml", "100ml"), "scent": ("floral", "fruity", "vanilla", "citrus", "musk")},
        (450, 0.8),
        ("long lasting", "inspired", "oil based", "sweet", "luxury", "travel size"),
        ("women", "ladies", "gift"),
        ("Long lasting scent up to 12 hours.", "Perfect gift for her."),
        weight=1.5,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Nail Care > Nail Polish Remover",
        ("nail polish remover", "gel remover", "nail polish", "gel polish", "cuticle oil"),
        _m(BEAUTY_ATTRS, color_family=("silver", "clear", "pink", "red", "nude"), volume=("10ml", "15ml", "100ml")),
        {"color_family": ("clear", "red", "pink", "nude", "black", "silver"), "volume": ("15ml", "100ml")},
        (100, 0.7),
        ("fast", "gentle", "acetone free", "magic", "uv led", "salon"),
        ("nails", "gel nails", "home use"),
        ("Removes gel polish in 3-5 minutes.",),
        weight=1.0,
        brands=B_BEAUTY,
    ),
    Leaf(
        "Health & Beauty > Food Supplements > Sports Nutrition",
        ("whey protein", "creatine", "pre workout", "mass gainer", "bcaa", "multivitamins"),
        _m(
            GROCERY_ATTRS,
            flavor=("chocolate", "vanilla", "strawberry", "cookies & cream", "unflavored", "fruit punch"),
            servings=("30 servings", "60 servings", "120 servings"),
        ),
        {
            "flavor": ("chocolate", "vanilla", "strawberry", "cookies & cream", "unflavored"),
            "size": ("1 lb", "2 lbs", "5 lbs", "10 lbs"),
        },
        (1500, 0.8),
        ("authentic", "muscle", "lean", "sealed", "fda registered", "high protein"),
        ("gym", "athletes", "muscle gain", "weight loss"),
        ("Supports muscle recovery after workouts.", "FDA registered, sealed and authentic."),
        weight=1.0,
        brands=B_SUPP,
    ),
    # ----------------------------------------------------------------- toys
    Leaf(
        "Toys & Games > Building Blocks",
        ("building blocks", "block toy", "brick set", "mini blocks", "3d puzzle blocks"),
        _m(TOY_ATTRS, material=("abs plastic", "plastic"), pieces=("100+ pcs", "300+ pcs", "500+ pcs", "1000+ pcs")),
        {
            "color_family": ("as picture", "pink", "blue", "multicolor"),
            "variation": ("style a", "style b", "style c", "with box", "no box"),
        },
        (380, 0.9),
        ("cute", "cartoon", "compatible", "educational", "diy", "mini"),
        ("kids", "boys", "girls", "adults"),
        (
            "Compatible with major brick brands.",
            "Develops creativity and hand-eye coordination.",
            "Great birthday gift.",
        ),
        weight=1.8,
        brands=B_TOYS,
    ),
    Leaf(
        "Toys & Games > Stuffed Toys",
        ("stuffed toy", "plush toy", "teddy bear", "pillow doll", "plushie"),
        _m(
            TOY_ATTRS,
            material=("plush", "cotton", "pp cotton"),
            size_stuffed_toys=("small (below 30cm)", "medium (30-60cm)", "large (above 60cm)"),
        ),
        {
            "size": ("20cm", "30cm", "40cm", "60cm", "80cm", "1m"),
            "color_family": ("brown", "pink", "white", "cream", "grey"),
        },
        (300, 0.8),
        ("soft", "cute", "huggable", "giant", "kawaii", "cuddly"),
        ("kids", "girlfriend", "baby", "gift"),
        ("Super soft and huggable.", "Filled with premium PP cotton."),
        weight=1.3,
        brands=B_TOYS,
    ),
    Leaf(
        "Toys & Games > Remote Control & Vehicles > RC Cars",
        ("rc car", "remote control car", "drift car", "monster truck", "rc stunt car"),
        _m(TOY_ATTRS, material=("abs plastic", "plastic", "alloy"), interest=("vehicles", "sports")),
        {
            "color_family": ("red", "blue", "green", "yellow", "black"),
            "variation": ("1 battery", "2 batteries", "3 batteries"),
        },
        (900, 0.8),
        ("4wd", "high speed", "rechargeable", "off road", "2.4ghz", "stunt"),
        ("kids", "boys", "adults"),
        ("2.4GHz remote control with long range.", "Rechargeable battery included."),
        weight=1.0,
        brands=B_TOYS,
    ),
    # ------------------------------------------------------ media and music
    Leaf(
        "Media, Music & Books > Musical Instruments > Drums & Cymbals",
        ("crash cymbal", "ride cymbal", "hi-hat cymbals", "drum sticks", "cajon"),
        _m(MUSIC_ATTRS, material=("b20 cast bronze", "brass", "b8 bronze", "maple wood", "hickory")),
        {"size": ("14 inch", "16 inch", "18 inch", "20 inch"), "variation": ("single", "pair", "with bag")},
        (2500, 0.9),
        ("hybrid", "hand hammered", "professional", "dark", "ghost", "bright"),
        ("drummers", "practice", "stage"),
        ("Hand hammered for a warm and complex sound.",),
        weight=0.6,
        brands=B_MUSIC,
    ),
    Leaf(
        "Media, Music & Books > Musical Instruments > Guitars",
        ("acoustic guitar", "electric guitar", "ukulele", "bass guitar", "classical guitar"),
        _m(
            MUSIC_ATTRS,
            material=("mahogany", "rosewood", "spruce", "basswood", "maple"),
            guitar_size=("36 inch", "38 inch", "40 inch", "41 inch"),
        ),
        {
            "color_family": ("natural", "black", "sunburst", "blue", "white"),
            "variation": ("guitar only", "with bag", "full package"),
        },
        (3500, 0.8),
        ("beginner", "professional", "full size", "solid top", "cutaway", "vintage"),
        ("beginners", "students", "kids"),
        ("Comes with gig bag, capo and picks.", "Smooth neck for easy playing."),
        weight=0.8,
        brands=B_MUSIC,
    ),
    Leaf(
        "Media, Music & Books > Musical Instruments > Musical Accessories",
        ("violin bow", "guitar strings", "capo", "tuner", "guitar picks", "music stand"),
        _m(MUSIC_ATTRS),
        {"size": ("1/8", "1/4", "1/2", "3/4", "4/4"), "variation": ("1 set", "2 sets", "3 sets")},
        (250, 0.8),
        ("professional", "handmade", "durable", "clip-on", "full size", "universal"),
        ("violin", "guitar", "ukulele", "bass"),
        ("Made by experienced craftsmen for warm and clear tone.",),
        weight=1.0,
        brands=B_MUSIC,
    ),
    Leaf(
        "Media, Music & Books > Books > Fiction",
        ("novel", "comic book", "story book", "manga", "book"),
        _m(BOOK_ATTRS, genre=("romance", "fantasy", "mystery", "horror", "comics", "literature", "simple stories")),
        {"variation": ("paperback", "hardcover", "box set")},
        (350, 0.6),
        ("bestselling", "brand new", "sealed", "complete", "illustrated", "classic"),
        ("kids", "teens", "adults", "book lovers"),
        ("Brand new and sealed.", "A page-turner loved by readers."),
        weight=1.0,
        brands=B_BOOKS,
    ),
    Leaf(
        "Media, Music & Books > Books > Learning & Education",
        ("workbook", "reviewer", "textbook", "activity book", "flash cards"),
        _m(BOOK_ATTRS, subject=("math", "science", "english", "filipino", "physics", "board exam")),
        {"variation": ("grade 1", "grade 2", "grade 3", "grade 4", "grade 5", "grade 6")},
        (250, 0.6),
        ("updated", "complete", "illustrated", "deped aligned", "easy", "new edition"),
        ("kids", "students", "teachers", "board exam"),
        ("Updated to the latest curriculum.",),
        weight=0.8,
        brands=B_BOOKS,
    ),
    # ----------------------------------------------------------- groceries
    Leaf(
        "Groceries > Food Staples & Cooking Essentials > Herbs & Spices",
        ("chili powder", "black pepper", "garlic powder", "paprika", "cinnamon powder", "oregano"),
        _m(
            GROCERY_ATTRS,
            **{"types_of_herbs_&_spices": ("chili", "pepper", "garlic", "paprika", "cinnamon", "mixed herbs")},
        ),
        {"size": ("100g", "250g", "500g", "1kg"), "variation": ("ground", "whole", "flakes")},
        (120, 0.8),
        ("pure", "ground", "premium", "bulk", "fresh", "organic"),
        ("cooking", "baking", "restaurant", "home"),
        ("Freshly ground and packed.", "No preservatives or additives."),
        weight=1.2,
        brands=B_GROCERY,
    ),
    Leaf(
        "Groceries > Beverages > Coffee",
        ("coffee", "ground coffee", "coffee beans", "3 in 1 coffee", "barako coffee"),
        _m(
            GROCERY_ATTRS,
            coffee_roast=("light", "medium", "dark"),
            flavor=("original", "mocha", "caramel", "hazelnut", "vanilla"),
        ),
        {"size": ("250g", "500g", "1kg"), "variation": ("beans", "ground", "fine ground")},
        (300, 0.7),
        ("arabica", "barako", "robusta", "freshly roasted", "single origin", "local"),
        ("espresso", "french press", "drip", "moka pot"),
        ("Roasted in small batches for full flavor.",),
        weight=1.0,
        brands=B_GROCERY,
    ),
    Leaf(
        "Groceries > Snacks > Chips & Crisps",
        ("chips", "banana chips", "chicharon", "nachos", "kropek"),
        _m(GROCERY_ATTRS, flavor=("original", "spicy", "cheese", "sour cream", "bbq", "salted egg")),
        {
            "flavor": ("original", "spicy", "cheese", "sour cream", "bbq", "salted egg"),
            "size": ("60g", "100g", "250g", "500g"),
        },
        (80, 0.7),
        ("crunchy", "homemade", "spicy", "sweet", "pasalubong", "fresh"),
        ("snacks", "party", "pasalubong"),
        ("Crispy and freshly made.",),
        weight=1.2,
        brands=B_GROCERY,
    ),
    # -------------------------------------------------------------- sports
    Leaf(
        "Sports & Outdoors > Fitness > Yoga Mats",
        ("yoga mat", "exercise mat", "resistance band", "dumbbell", "ab roller"),
        _m(
            SPORT_ATTRS,
            sports_material=("tpe", "nbr", "pvc", "rubber", "latex"),
            thickness=("4mm", "6mm", "8mm", "10mm"),
        ),
        {"color_family": ("purple", "blue", "pink", "black", "green", "grey"), "size": ("4mm", "6mm", "8mm", "10mm")},
        (450, 0.7),
        ("non-slip", "thick", "eco friendly", "foldable", "home gym", "extra thick"),
        ("yoga", "pilates", "home workout", "gym"),
        ("Non-slip texture on both sides.",),
        weight=1.2,
        brands=B_SPORTS,
    ),
    Leaf(
        "Sports & Outdoors > Camping & Hiking > Tents",
        ("camping tent", "tent", "sleeping bag", "hammock", "camping chair"),
        _m(SPORT_ATTRS, capacity=("1-2 persons", "3-4 persons", "5-6 persons", "8 persons")),
        {
            "size": ("2 person", "4 person", "6 person", "8 person"),
            "color_family": ("green", "blue", "khaki", "orange", "camouflage"),
        },
        (1800, 0.7),
        ("waterproof", "automatic", "portable", "outdoor", "lightweight", "instant"),
        ("camping", "hiking", "beach", "family"),
        ("Sets up in under a minute.", "Waterproof rainfly included."),
        weight=0.8,
        brands=B_SPORTS,
    ),
    Leaf(
        "Sports & Outdoors > Fishing > Fishing Rods",
        ("fishing rod", "fishing reel", "rod and reel combo", "fishing lure", "fishing line"),
        _m(SPORT_ATTRS, sports_material=("carbon fiber", "fiberglass", "aluminum"), activity_type=("fishing",)),
        {"size": ("1.8m", "2.1m", "2.4m", "2.7m", "3.0m"), "variation": ("rod only", "reel only", "combo set")},
        (800, 0.9),
        ("telescopic", "carbon", "ultralight", "portable", "saltwater", "heavy duty"),
        ("saltwater", "freshwater", "beginners"),
        ("Telescopic design, easy to carry.",),
        weight=0.8,
        brands=B_SPORTS,
    ),
    Leaf(
        "Sports & Outdoors > Cycling > Bike Helmets",
        ("bike helmet", "cycling helmet", "bike light", "bike gloves", "bike bell"),
        _m(SPORT_ATTRS, activity_type=("cycling",)),
        {
            "size": ("int:m", "int:l", "int:xl", "int: one size"),
            "color_family": ("black", "white", "red", "blue", "matte black"),
        },
        (850, 0.8),
        ("lightweight", "ventilated", "adjustable", "mtb", "road bike", "led"),
        ("mtb", "road bike", "adults", "kids"),
        ("Lightweight with ventilation holes.",),
        weight=0.8,
        brands=B_SPORTS,
    ),
    # ---------------------------------------------------------- automotive
    Leaf(
        "Automotive > Car Interior Accessories > Air Fresheners",
        ("car air freshener", "car perfume", "air freshener spray", "car diffuser"),
        _m(AUTO_ATTRS, scent=("floral", "citrus", "ocean", "new car", "lavender", "coffee")),
        {
            "scent": ("floral", "citrus", "ocean", "new car", "lavender", "coffee"),
            "variation": ("1pc", "2pcs", "refill"),
        },
        (150, 0.7),
        ("long lasting", "hotel scent", "natural", "odor eliminator", "premium", "refreshing"),
        ("car", "home", "office"),
        ("Eliminates odors and leaves a fresh scent.",),
        weight=1.0,
        brands=B_AUTO,
    ),
    Leaf(
        "Automotive > Car Interior Accessories > Floor Mats",
        ("car floor mat", "trunk tray", "car mat", "cargo liner", "seat cover"),
        _m(AUTO_ATTRS, model=("vios", "innova", "fortuner", "mirage", "city", "civic", "montero", "universal")),
        {"color_family": ("black", "beige", "grey", "red"), "variation": ("front only", "full set", "trunk only")},
        (950, 0.7),
        ("custom fit", "waterproof", "heavy duty", "3d", "anti-slip", "oem"),
        ("toyota", "honda", "mitsubishi", "universal"),
        ("Custom fit for a perfect match.", "Waterproof and easy to clean."),
        weight=1.0,
        brands=B_AUTO,
    ),
    Leaf(
        "Automotive > Motorcycle > Motorcycle Parts",
        ("motorcycle tire", "side mirror", "brake pads", "handle grip", "led headlight", "muffler"),
        _m(MOTO_ATTRS),
        {
            "size": ("70/90-14", "80/90-14", "90/80-14", "100/80-14", "110/70-12"),
            "color_family": ("black", "chrome", "red", "blue", "gold"),
        },
        (450, 0.9),
        ("heavy duty", "original", "plug and play", "tubeless", "racing", "high quality"),
        ("honda click", "mio", "nmax", "raider", "universal"),
        ("Direct fit, no modification needed.",),
        weight=1.5,
        brands=B_AUTO,
    ),
    # ---------------------------------------------------------------- pets
    Leaf(
        "Pet Supplies > Dog Supplies > Dog Food",
        ("dog food", "puppy food", "dog treats", "dry dog food", "wet dog food"),
        _m(PET_ATTRS, flavor=("beef", "chicken", "lamb", "salmon", "liver")),
        {"size": ("1kg", "3kg", "8kg", "20kg"), "flavor": ("beef", "chicken", "lamb", "salmon")},
        (700, 0.8),
        ("complete nutrition", "high protein", "grain free", "repacked", "premium", "healthy"),
        ("puppy", "adult dogs", "small breeds", "all breeds"),
        ("Complete and balanced nutrition.",),
        weight=1.0,
        brands=B_PETS,
    ),
    Leaf(
        "Pet Supplies > Cat Supplies > Cat Litter",
        ("cat litter", "tofu litter", "bentonite litter", "litter box", "cat sand"),
        _m(PET_ATTRS, scent=("unscented", "lavender", "lemon", "coffee", "apple")),
        {"size": ("5l", "10l", "25l"), "scent": ("unscented", "lavender", "lemon", "coffee", "apple")},
        (400, 0.6),
        ("clumping", "odor control", "dust free", "flushable", "tofu", "low dust"),
        ("cats", "kittens"),
        ("Fast clumping and odor control.",),
        weight=0.8,
        brands=B_PETS,
    ),
    Leaf(
        "Pet Supplies > Pet Accessories > Collars & Leashes",
        ("dog collar", "leash", "harness", "cat collar", "pet bowl"),
        _m(PET_ATTRS, material=("nylon", "leather", "reflective nylon", "stainless steel", "silicone")),
        {"size": ("xs", "s", "m", "l", "xl"), "color_family": ("red", "blue", "pink", "black", "green", "yellow")},
        (200, 0.7),
        ("adjustable", "reflective", "cute", "durable", "personalized", "no pull"),
        ("dogs", "cats", "puppies", "small dogs"),
        ("Adjustable to fit most pets.",),
        weight=1.0,
        brands=B_PETS,
    ),
    # ---------------------------------------------------------------- tools
    Leaf(
        "Tools & Home Improvement > Hand Tools > Pliers",
        ("pliers", "wrench", "screwdriver set", "hammer", "pipe tap", "tool set"),
        _m(TOOL_ATTRS, type_of_pliers=("combination", "long nose", "diagonal", "locking", "crimping")),
        {"size": ("6 inch", "8 inch", "10 inch", "12 inch"), "variation": ("1pc", "set")},
        (250, 0.8),
        ("heavy duty", "professional", "multi-function", "anti-slip", "industrial", "hss"),
        ("electrician", "mechanic", "diy", "home"),
        ("Forged from hardened steel for durability.",),
        weight=1.3,
        brands=B_TOOLS,
    ),
    Leaf(
        "Tools & Home Improvement > Power Tools > Drills",
        ("cordless drill", "impact drill", "angle grinder", "rotary hammer", "electric screwdriver"),
        _m(TOOL_ATTRS, input_voltage=("12v", "21v", "220v"), power_consumption=("500-1000", "1000-2000")),
        {
            "variation": ("tool only", "1 battery", "2 batteries", "full set"),
            "color_family": ("yellow", "blue", "red", "green", "black"),
        },
        (1800, 0.8),
        ("cordless", "brushless", "heavy duty", "rechargeable", "professional", "variable speed"),
        ("wood", "metal", "concrete", "diy"),
        ("Brushless motor for longer runtime.",),
        weight=1.0,
        brands=B_TOOLS,
    ),
    Leaf(
        "Tools & Home Improvement > Hardware > Wheels & Casters",
        ("rubber wheel", "caster wheel", "gate roller", "pushcart wheel", "swivel caster"),
        _m(TOOL_ATTRS, material=("rubber", "stainless steel", "nylon", "polyurethane", "cast iron")),
        {"size": ("4 inch", "6 inch", "8 inch", "10 inch", "12 inch")},
        (300, 0.8),
        ("heavy duty", "solid", "swivel", "with brake", "v type", "u type"),
        ("pushcart", "gate", "furniture", "trolley"),
        ("Supports heavy loads without deforming.",),
        weight=0.8,
        brands=B_TOOLS,
    ),
    Leaf(
        "Tools & Home Improvement > Electrical > Extension Cords",
        ("extension cord", "power strip", "universal outlet", "circuit breaker", "led bulb"),
        _m(
            TOOL_ATTRS,
            type_of_electrical_circuit_parts=("outlet", "switch", "breaker", "wire", "socket"),
            plug_type=("universal", "2 pin", "3 pin"),
        ),
        {"size": ("3m", "5m", "10m", "15m"), "variation": ("3 gang", "4 gang", "6 gang")},
        (400, 0.7),
        ("heavy duty", "surge protected", "universal", "with usb", "fire resistant", "individual switch"),
        ("home", "office", "aircon", "appliances"),
        ("Overload protection keeps your devices safe.",),
        weight=1.0,
        brands=B_TOOLS,
    ),
    # ----------------------------------------------------------- stationery
    Leaf(
        "Stationery, Craft & Gift Cards > Writing & Correction > Pens",
        ("ballpen", "gel pen", "highlighter", "sign pen", "marker"),
        _m(STATIONERY_ATTRS, ink_color=("black", "blue", "red", "assorted")),
        {"color_family": ("black", "blue", "red", "pastel", "assorted"), "size": ("0.38mm", "0.5mm", "0.7mm")},
        (80, 0.7),
        ("smooth", "quick dry", "aesthetic", "retractable", "cute", "refillable"),
        ("school", "office", "journaling", "students"),
        ("Smooth writing with quick-dry ink.",),
        weight=1.0,
        brands=B_STAT,
    ),
    Leaf(
        "Stationery, Craft & Gift Cards > Paper Products > Notebooks",
        ("notebook", "planner", "journal", "yellow pad", "sketchbook"),
        _m(STATIONERY_ATTRS, paper_size=("a5", "a4", "b5", "letter")),
        {"size": ("a5", "a4", "b5"), "variation": ("lined", "dotted", "grid", "blank")},
        (100, 0.7),
        ("aesthetic", "spiral", "hardbound", "minimalist", "thick", "undated"),
        ("school", "office", "journaling", "students"),
        ("Thick paper that resists ink bleed.",),
        weight=0.9,
        brands=B_STAT,
    ),
    Leaf(
        "Stationery, Craft & Gift Cards > School & Office Equipment > Calculators",
        ("calculator", "scientific calculator", "basic calculator", "printing calculator"),
        _m(
            STATIONERY_ATTRS,
            color_family=("orange", "black", "white", "pink", "blue"),
            power_source=("battery", "solar", "dual power"),
        ),
        {"color_family": ("orange", "black", "white", "pink", "blue")},
        (350, 0.6),
        ("basic", "12 digits", "scientific", "solar", "large display", "portable"),
        ("school", "office", "engineering", "business"),
        ("Large display easy to read.",),
        weight=0.6,
        brands=B_STAT,
    ),
    # --------------------------------------------------------------- baby
    Leaf(
        "Mother & Baby > Diapering & Potty > Disposable Diapers",
        ("baby diapers", "pants diapers", "tape diapers", "wet wipes", "diaper pants"),
        _m(BABY_ATTRS, pack_type=("single", "multipack", "bundle")),
        {"size": ("nb", "s", "m", "l", "xl", "xxl"), "variation": ("1 pack", "2 packs", "4 packs")},
        (600, 0.6),
        ("ultra thin", "breathable", "leak proof", "soft", "overnight", "hypoallergenic"),
        ("baby", "newborn", "toddler"),
        ("Up to 12 hours leak protection.",),
        weight=1.0,
        brands=B_BABY,
    ),
    Leaf(
        "Mother & Baby > Feeding > Baby Bottles",
        ("feeding bottle", "baby bottle", "sippy cup", "pacifier", "bottle nipple"),
        _m(BABY_ATTRS, baby_material=("pp", "silicone", "glass", "ppsu")),
        {
            "size": ("60ml", "150ml", "240ml", "300ml"),
            "baby age": ("0-3 months", "3-6 months", "6-12 months", "12 months+"),
        },
        (350, 0.6),
        ("anti-colic", "bpa free", "wide neck", "natural feel", "leak proof", "soft"),
        ("newborn", "baby", "toddler"),
        ("BPA free and easy to clean.",),
        weight=0.9,
        brands=B_BABY,
    ),
    # --------------------------------------------------------------- bags
    Leaf(
        "Bags and Travel > Women Bags > Backpacks",
        ("backpack", "school bag", "laptop backpack", "mini backpack", "anti-theft backpack"),
        _m(BAG_ATTRS),
        {"color_family": ("black", "beige", "pink", "blue", "grey", "brown", "green")},
        (600, 0.7),
        ("waterproof", "large capacity", "korean", "aesthetic", "anti-theft", "lightweight"),
        ("women", "students", "travel", "laptop"),
        ("Fits a 15.6 inch laptop.", "Water resistant fabric."),
        weight=1.3,
        brands=B_BAGS,
    ),
    Leaf(
        "Bags and Travel > Women Bags > Tote Bags",
        ("tote bag", "canvas bag", "shoulder bag", "sling bag", "handbag"),
        _m(BAG_ATTRS),
        {"color_family": ("black", "white", "beige", "brown", "pink", "cream")},
        (350, 0.7),
        ("aesthetic", "large", "canvas", "korean", "minimalist", "zippered"),
        ("women", "school", "office", "grocery"),
        ("Roomy enough for everyday essentials.",),
        weight=1.2,
        brands=B_BAGS,
    ),
    Leaf(
        "Bags and Travel > Luggage > Suitcases",
        ("luggage", "suitcase", "trolley bag", "hand carry luggage", "travel bag"),
        _m(BAG_ATTRS, material=("abs", "pc", "polycarbonate", "oxford cloth", "aluminum frame")),
        {
            "size": ("18 inch", "20 inch", "24 inch", "28 inch"),
            "color_family": ("black", "grey", "blue", "pink", "champagne", "green"),
        },
        (2400, 0.6),
        ("lightweight", "expandable", "spinner", "tsa lock", "hard case", "durable"),
        ("travel", "hand carry", "check in", "business trip"),
        ("360 degree spinner wheels.", "TSA lock for security."),
        weight=0.9,
        brands=B_BAGS,
    ),
)


def check_vocabulary() -> list[str]:
    """Problems in the tables above (empty when sound).

    Checked by the tests rather than at import so a typo cannot break the
    arena at run time; the generator also refuses to start on a problem.
    """
    problems: list[str] = []
    paths = set()
    for leaf in LEAVES:
        depth = len(leaf.path.split(" > "))
        if not 2 <= depth <= 3:
            problems.append(f"{leaf.path}: depth {depth}")
        if leaf.path in paths:
            problems.append(f"{leaf.path}: duplicate")
        paths.add(leaf.path)
        if not leaf.nouns or not leaf.brands or len(leaf.attributes) < 2:
            problems.append(f"{leaf.path}: needs nouns, brands and >= 2 attributes")
        for key, values in list(leaf.attributes.items()) + list(leaf.sku.items()):
            if key != key.lower() or not values:
                problems.append(f"{leaf.path}: key {key!r}")
            for value in values:
                if value != value.lower() or not value.strip():
                    problems.append(f"{leaf.path}: {key} value {value!r}")
            if len(set(values)) != len(values):
                problems.append(f"{leaf.path}: {key} repeats a value")
        for scheme in leaf.schemes:
            if not 1 <= len(scheme) <= 2 or any(k not in leaf.sku for k in scheme):
                problems.append(f"{leaf.path}: scheme {scheme!r}")
        median, sigma = leaf.price
        if median <= 0 or sigma <= 0:
            problems.append(f"{leaf.path}: price {leaf.price!r}")
    return problems
