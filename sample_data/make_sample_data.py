"""Write the sample corpus in sample_data/*.jsonl: documents written for gristmill, each with its fate.

Every record carries `expected`: "kept", or the name of the first stage of recipes/default.toml that
removes it, with `expected_reason` where the reason is unambiguous. `expected_fineweb` is the same
for recipes/fineweb.toml (no verify, badwords, scorers, exact or semantic dedup: see README.md).
Duplicate copies name their survivor in `duplicate_of`; kept documents may list `expected_absent`,
strings that must not appear in the kept text (redacted e-mails and IPs, stripped boilerplate).

Run `python sample_data/make_sample_data.py` from the repository root; the output is deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT_DIR = Path(__file__).resolve().parent

# --- Good articles: substantive English prose on distinct topics. Expected fate: kept. ---------------
# (slug, url, text). The first line is the page title, as text extraction usually leaves it.
ARTICLES: list[tuple[str, str, str]] = [
    (
        "sourdough-starter",
        "https://www.breadcraft-journal.com/guides/keeping-a-sourdough-starter",
        """Keeping a Sourdough Starter Alive

A sourdough starter is nothing more than flour and water that has been colonised by wild yeasts and lactic acid bacteria. The yeasts produce carbon dioxide, which raises the dough, while the bacteria produce the acids that give the bread its tang and help it keep for longer. Because both populations are living things, a starter behaves less like an ingredient and more like a pet that needs regular meals.

Most bakers feed their starter by discarding all but a small portion and adding fresh flour and water in equal weights. At warm room temperature this is usually done once or twice a day. A healthy starter should roughly double in volume within four to eight hours of a feeding, smell pleasantly sour, and be full of small bubbles when you look at it from the side of the jar.

If you bake only once a week, the refrigerator is your friend. Cold slows fermentation dramatically, so a starter stored in the fridge can go a week or more between feedings. Take it out a day before baking and give it two feedings at room temperature so that it is lively again when you mix the dough.

A layer of grey liquid on top is simply alcohol produced by hungry yeast. It is a sign that the starter needs feeding, not that it has died. Pour it off or stir it back in, feed as normal, and the culture will usually recover within a day.""",
    ),
    (
        "honeybee-waggle-dance",
        "https://nature-notes.org/insects/the-honeybee-waggle-dance",
        """How Honeybees Tell Each Other Where the Flowers Are

When a forager bee discovers a rich patch of flowers, she returns to the hive and performs a short, repeated routine on the vertical surface of the comb. Biologists call it the waggle dance, and it is one of the most remarkable communication systems known in the animal world.

The dance has two parts. In the waggle run, the bee walks in a straight line while shaking her abdomen from side to side. She then loops back to the starting point, alternating between the left and the right, and performs the run again. The angle of the straight run relative to vertical tells the other bees the direction of the food relative to the sun. A run pointing straight up means fly towards the sun; a run angled forty degrees to the right means fly forty degrees to the right of it.

Distance is encoded in the duration of the waggle run. The longer the bee waggles, the farther away the flowers are, with roughly one second of waggling corresponding to about a kilometre of flight, although the exact relationship varies between colonies.

The bees watching the dance cannot see well in the dark hive, so they follow the dancer closely and pick up the information through touch, vibration and the scent of the flowers she carries. Karl von Frisch, who decoded the dance in the middle of the twentieth century, shared a Nobel Prize for the work.""",
    ),
    (
        "how-tides-work",
        "https://www.coastal-science.net/explainers/why-the-sea-has-tides",
        """Why the Sea Rises and Falls Twice a Day

Anyone who has spent a day at the coast has watched the water creep up the beach and then slowly withdraw again. These tides are caused mainly by the gravitational pull of the Moon, with a smaller contribution from the Sun.

The Moon pulls on every part of the Earth, but it pulls more strongly on the side nearest to it than on the far side. The oceans facing the Moon are drawn towards it, forming a bulge of water. On the opposite side of the planet a second bulge forms, because there the Moon pulls the solid Earth away from the water more strongly than it pulls the water itself. As the Earth rotates through these two bulges each day, most coastlines experience two high tides and two low tides.

The Sun produces tides in the same way, but they are less than half as strong because the Sun is so much farther away. When the Sun, Moon and Earth line up at new moon and full moon, their effects add together and produce spring tides with an unusually large range. When the Sun and Moon are at right angles, at the quarter moons, they partly cancel and the smaller neap tides result.

Local geography matters enormously. Funnel-shaped bays such as the Bay of Fundy in Canada amplify the tide to more than fifteen metres, while some enclosed seas, like the Mediterranean, see a range of only a few tens of centimetres.""",
    ),
    (
        "bicycle-puncture",
        "https://cyclingworkshop.co.uk/maintenance/fixing-a-puncture-at-the-roadside",
        """Fixing a Bicycle Puncture at the Roadside

A flat tyre is the most common mechanical problem a cyclist will face, and with a little practice it can be fixed in ten minutes. You need a pair of tyre levers, a pump, and either a spare inner tube or a puncture repair kit.

Start by removing the wheel. On most modern bikes this means opening the brake, flipping the quick release lever or undoing the thru-axle, and lifting the frame away. Let out any remaining air, then push the tyre bead towards the centre of the rim all the way round, which gives you the slack needed to hook a lever under the bead and pry one side of the tyre off.

Before you fit a new tube, run your fingers carefully around the inside of the tyre to find whatever caused the puncture. A tiny flint or a sliver of glass left in the casing will simply puncture the new tube as soon as you ride away. Check the rim tape as well, because a displaced strip can expose a spoke hole.

Inflate the new tube just enough to give it shape, tuck it into the tyre starting at the valve, and then work the bead back onto the rim with your thumbs. Avoid using levers for this final step if you can, since it is easy to pinch the tube. Pump the tyre up to the pressure printed on its sidewall, refit the wheel and check that the brake works before setting off.""",
    ),
    (
        "printing-press",
        "https://historyhub.example.edu/articles/gutenberg-and-the-printing-press",
        """Gutenberg and the Spread of the Printed Word

Around 1450 in the German city of Mainz, a goldsmith named Johannes Gutenberg began printing with movable metal type. Printing from carved wooden blocks had existed for centuries in East Asia, and movable type made of ceramic and later metal had been used in China and Korea. What Gutenberg combined was a practical system suited to the European alphabet: a hand mould for casting large numbers of identical letters, an oil-based ink that stuck to metal, and a screw press adapted from those used to make wine and paper.

The most famous product of his workshop is the Gutenberg Bible, completed around 1455. Roughly 180 copies were made, and about fifty survive today, some printed on paper and some on vellum. Its even columns and careful spacing show how seriously the early printers took the appearance of the page.

The technology spread with astonishing speed. By 1500 there were printing shops in more than two hundred European towns, and millions of books had been produced. Prices fell, literacy rose, and ideas could be copied faithfully instead of being altered by each scribe who transcribed them.

Historians still debate how much credit the press deserves for the great changes that followed, from the Reformation to the scientific revolution. Few doubt, however, that cheap and reliable copies of texts changed how knowledge was shared, argued over and preserved.""",
    ),
    (
        "home-composting",
        "https://www.greenpatch-gardening.com/soil/starting-a-compost-heap",
        """Starting a Compost Heap That Actually Works

Composting turns kitchen scraps and garden waste into a dark, crumbly material that improves almost any soil. The process is carried out by bacteria, fungi, worms and insects, and your job is mainly to give them the right conditions.

The key is a balance between two kinds of material. Greens are moist and rich in nitrogen: vegetable peelings, coffee grounds, fresh grass clippings and plant trimmings. Browns are dry and rich in carbon: fallen leaves, shredded cardboard, straw and woody stems. A heap made only of greens turns slimy and smells, while a heap made only of browns barely rots at all. Aim for roughly equal volumes of each, mixed together rather than laid in thick layers.

Moisture and air matter too. The heap should feel like a wrung-out sponge; if it is dry, sprinkle it with water, and if it is soggy, add more browns. Turning the pile with a fork every couple of weeks lets oxygen in and speeds things up considerably.

Avoid adding meat, fish, dairy products and cooked food, which attract rats and can smell unpleasant. Diseased plants and perennial weeds with their roots attached are also best kept out. With reasonable care, a heap started in spring will give you usable compost by the autumn, ready to spread around your beds or dig into the vegetable patch.""",
    ),
    (
        "compound-interest",
        "https://moneywise-basics.com/savings/understanding-compound-interest",
        """Understanding Compound Interest

Compound interest is often described as interest on interest. When you save money in an account that pays compound interest, the interest you earn each period is added to your balance, and in the next period you earn interest on that larger amount. Over long stretches of time this small detail makes an enormous difference.

Consider a deposit of one thousand pounds earning five percent a year. With simple interest you would receive fifty pounds every year, so after twenty years you would have two thousand pounds. With annual compounding, the balance grows to about 2,653 pounds over the same period, because each year's interest itself starts earning interest.

The frequency of compounding also matters, although less than people often think. Monthly compounding at the same nominal rate produces a slightly higher result than yearly compounding, which is why savings accounts quote an annual equivalent rate that allows fair comparisons between products.

The same mathematics works against you when you borrow. Credit card balances that are not paid off in full each month compound quickly, and a debt can grow much faster than its owner expects. A handy rule of thumb is the rule of seventy-two: divide seventy-two by the annual interest rate to estimate how many years it takes for an amount to double. At six percent, money doubles in roughly twelve years; at eighteen percent, in only four.""",
    ),
    (
        "volcano-types",
        "https://earthscience-today.org/volcanoes/why-some-volcanoes-explode",
        """Why Some Volcanoes Explode and Others Ooze

Volcanoes differ enormously in how they erupt. The lava lakes of Hawaii can be approached by scientists in protective suits, while the eruption of Mount St Helens in 1980 flattened forests for miles around. The main reason for the difference lies in the chemistry of the molten rock.

Magma that is low in silica, such as the basalt feeding Hawaiian volcanoes, is runny. Gas bubbles dissolved in it can escape easily as it rises, so the eruptions tend to produce flowing rivers of lava and fountains of glowing spatter rather than violent blasts. These gently sloping mountains are called shield volcanoes because their outline resembles a warrior's shield lying on the ground.

Magma rich in silica, such as andesite and rhyolite, is far more viscous. Gas cannot escape, so pressure builds until the rock shatters in an explosive eruption that throws ash high into the atmosphere. Such volcanoes often build steep, layered cones known as stratovolcanoes, and they are common around the Pacific Ring of Fire where one tectonic plate slides beneath another.

Explosive eruptions can also produce pyroclastic flows, avalanches of hot gas and rock fragments that race down the slopes at highway speeds. They are the deadliest volcanic hazard, and monitoring gas emissions, ground swelling and small earthquakes helps authorities decide when nearby towns should be evacuated.""",
    ),
    (
        "first-10k",
        "https://www.runnersroute.com/training/your-first-ten-kilometre-race",
        """Training for Your First Ten Kilometre Race

Ten kilometres is a popular distance for new runners because it is long enough to feel like a real achievement yet short enough to prepare for in a couple of months. If you can already run for around twenty minutes without stopping, an eight to ten week plan is usually enough.

Most plans are built on three or four runs a week. The majority should be easy, at a pace where you could hold a conversation. These runs build the heart, lungs and muscles without leaving you exhausted. Once a week, include a longer run that increases gradually, adding no more than about ten percent to the distance each week, so that by the final fortnight you are comfortably covering eight or nine kilometres.

A single session of faster running can help, too. Short intervals, such as six repeats of two minutes at a brisk effort with easy jogging in between, teach your body to cope with a quicker pace. Keep them controlled; the goal is steady improvement, not collapsing at the end of each repeat.

Rest days are part of the training rather than a break from it. Muscles and tendons adapt during recovery, and many beginners get injured by adding too much too soon. In the last week before the race, reduce your mileage, sleep well and avoid trying new shoes or unfamiliar food on the morning itself.""",
    ),
    (
        "glacier-valleys",
        "https://www.geography-field-notes.com/landforms/how-glaciers-carve-valleys",
        """How Glaciers Carve Their Valleys

Walk through a mountain valley in the Alps, Norway or the Scottish Highlands and you may notice that it is shaped like a broad letter U, with steep walls and a flat floor. Rivers tend to cut narrow V-shaped valleys, so the U shape is a clue that ice once filled the landscape.

A glacier moves slowly downhill under its own weight, sometimes only a few centimetres a day. As it flows, it erodes the rock beneath it in two main ways. In plucking, meltwater seeps into cracks in the bedrock, freezes onto the ice and tears away blocks of stone as the glacier moves on. In abrasion, the rocks frozen into the base of the glacier scrape the valley floor like coarse sandpaper, leaving parallel scratches called striations.

Because a glacier is far thicker and wider than a river, it erodes the whole valley rather than a narrow channel. Side valleys whose smaller glaciers could not cut as deeply are left stranded high up on the walls once the ice melts. Today these hanging valleys often end in spectacular waterfalls.

The rock and soil a glacier carries are eventually dumped where the ice melts, forming ridges called moraines. Many lakes in formerly glaciated regions are held back by such ridges, and they record, for anyone who knows how to read them, the furthest point the ice once reached.""",
    ),
    (
        "houseplants-winter",
        "https://indoorjungle-blog.com/care/houseplants-through-the-winter",
        """Helping Houseplants Through the Winter

Many houseplants struggle in the colder months, not because of the cold itself but because of the combination of short days, dry indoor air and well-meaning owners who keep watering as if it were summer.

Light is the biggest change. A window that floods a room with sunshine in June may give only a few hours of weak light in December. Move plants closer to the brightest windows, clean the glass and the leaves so that every bit of light counts, and turn the pots occasionally so that they do not lean towards the window.

With less light, plants grow more slowly and use far less water. Overwatering is the most common cause of winter losses, because soggy compost deprives roots of oxygen and encourages rot. Check the soil with your finger before watering, and for most plants wait until the top few centimetres feel dry. Empty any water left standing in saucers.

Central heating dries the air, which troubles tropical species such as calatheas and ferns. Grouping plants together creates a slightly more humid pocket, and a tray of damp pebbles beneath the pots helps as well. Keep plants away from radiators and cold draughts, both of which cause leaves to brown at the edges. Hold off on feeding until spring, when new growth shows that the plant is ready for it.""",
    ),
    (
        "roman-aqueducts",
        "https://ancientworld-review.org/engineering/roman-aqueducts",
        """The Engineering of Roman Aqueducts

The aqueducts of ancient Rome are among the most impressive achievements of the classical world. At its height the city was supplied by eleven of them, delivering an enormous volume of water every day to public fountains, baths, private houses and workshops.

Contrary to the popular image, most of an aqueduct's length was not carried on tall arches. The majority ran underground in covered channels cut into hillsides or buried in trenches, which protected the water from contamination and from enemies. Arches were used only where the channel had to cross a valley while maintaining its gentle slope.

That slope was the central engineering challenge. Roman aqueducts relied entirely on gravity, so the channel had to descend steadily over distances of tens of kilometres, sometimes falling only a few tens of centimetres per kilometre. Surveyors used instruments such as the chorobates, a long table with a water level, and the groma, a cross-shaped sighting tool, to lay out routes with remarkable accuracy.

At the city end, water flowed into distribution tanks called castella, and from there through lead and ceramic pipes to its users. Maintenance crews cleared deposits of limestone that built up inside the channels. Several aqueducts, including the Aqua Virgo, were restored in later centuries, and one still feeds the Trevi Fountain in Rome today.""",
    ),
    (
        "vaccines-immune",
        "https://healthexplained.org/immunology/how-vaccines-teach-the-immune-system",
        """How Vaccines Teach the Immune System

The immune system has a remarkable ability to remember. After it fights off an infection, a population of long-lived memory cells remains in the body, ready to respond quickly if the same germ ever returns. Vaccines take advantage of this memory by giving the body a safe preview of a pathogen.

Different vaccines provide that preview in different ways. Some contain a weakened form of the virus that can still multiply a little but does not cause serious illness. Others contain an inactivated virus, or just a single protein from its surface. Newer messenger RNA vaccines deliver instructions that let the body's own cells produce a harmless piece of the virus for a short time.

In each case, immune cells recognise the foreign material and mount a response. B cells produce antibodies that stick to the pathogen and block it, while T cells learn to find and destroy infected cells. Some of these cells become memory cells, so that a later encounter with the real infection is met within days rather than weeks.

Because the response takes time to develop, protection usually begins one to two weeks after vaccination. Some vaccines need several doses or occasional boosters to build and maintain strong memory. When enough people in a community are immune, a disease struggles to spread, which also protects those who cannot be vaccinated for medical reasons.""",
    ),
    (
        "git-basics",
        "https://devnotes.io/tutorials/version-control-with-git-for-beginners",
        """Version Control with Git for Beginners

Version control is a way of recording changes to files over time so that you can recall earlier versions, see who changed what, and work on several ideas at once without losing anything. Git is by far the most widely used system today, from solo hobby projects to the largest software companies.

The central idea is the commit. When you reach a point worth saving, you stage the files you changed and commit them with a short message describing why you made the change. Each commit is a snapshot of the whole project, and Git links it to the commit that came before, building a history you can browse and search.

Branches let you develop a feature or experiment in isolation. Creating a branch is cheap and fast, and you can switch between branches in seconds. When the work is ready, you merge it back into the main branch. If two people changed the same lines, Git asks you to resolve the conflict by choosing how the final version should read.

Most teams also use a shared remote repository hosted on a server. You push your commits to share them and pull to fetch the work of others. A few habits make life easier: commit small, related changes together, write messages that explain the reason for a change, and pull frequently so that your branch never drifts too far from everyone else's.""",
    ),
    (
        "birdwatching",
        "https://www.wingspan-club.org/getting-started/birdwatching-for-beginners",
        """Getting Started with Birdwatching

Birdwatching is one of the easiest outdoor hobbies to begin. You can start in your own garden or local park, and the only essential equipment is a pair of binoculars and a field guide for your region.

When choosing binoculars, a magnification of eight or ten times is ideal for most people. Higher magnifications make the image shakier and the field of view narrower, which makes small, restless birds hard to follow. Try several pairs in a shop if you can, and pick the ones that feel comfortable in your hands and around your eyes.

Identification becomes much easier once you learn to look at a few key features in order. Note the size and shape of the bird compared with species you already know, then the shape of its bill, the colour and pattern of its plumage, and finally its behaviour. A bird that creeps up tree trunks, for instance, narrows the possibilities considerably.

Listening is just as important as looking. Many birds are heard long before they are seen, especially in woodland in spring. Learning a handful of common songs each year quickly builds your confidence. Keeping a simple notebook of what you see, where and when, turns casual observations into a record of the seasons, and many local groups welcome sightings for their surveys.""",
    ),
    (
        "kimchi-fermentation",
        "https://www.seoulkitchen-stories.com/recipes/making-kimchi-at-home",
        """Making Kimchi at Home

Kimchi is the fermented vegetable dish at the heart of Korean cooking. There are hundreds of regional varieties, but the most familiar is made from napa cabbage seasoned with chilli, garlic, ginger and spring onion. Making it at home is straightforward and deeply satisfying.

The first step is salting. Cut the cabbage into quarters or bite-sized pieces and sprinkle it generously with coarse salt, turning it every half hour. Over two hours or so, the salt draws water out of the leaves and makes them pliable, while also creating conditions in which the helpful lactic acid bacteria can thrive and spoilage organisms cannot. Rinse the cabbage well afterwards and let it drain.

Next, make the seasoning paste. Korean chilli flakes are mixed with a little rice flour porridge, grated garlic and ginger, fish sauce and a pinch of sugar. Wearing gloves, rub the paste thoroughly into every leaf, then pack the cabbage tightly into a clean jar, pressing down to remove air pockets and leaving some space at the top.

Leave the jar at room temperature for one or two days, until you see bubbles and the kimchi smells pleasantly sour. Then move it to the refrigerator, where it will continue to ferment slowly for weeks. Young kimchi is crisp and fresh, while older kimchi becomes more sour and is perfect for stews and fried rice.""",
    ),
    (
        "rooftop-solar",
        "https://homeenergy-advice.com/renewables/is-rooftop-solar-right-for-you",
        """Is Rooftop Solar Right for Your Home?

Solar panels have become much cheaper over the past decade, and many homeowners now wonder whether a rooftop system would pay for itself. The answer depends on your roof, your electricity use and the way your local grid rewards the power you generate.

Orientation is the first consideration. In the northern hemisphere, a roof facing south receives the most sunlight, although east and west facing roofs still produce a worthwhile amount spread more evenly through the day. Shade from trees, chimneys or neighbouring buildings can reduce output significantly, because a shaded cell limits the current flowing through the panels connected to it.

A typical household system might consist of ten to sixteen panels feeding an inverter, which converts the direct current they produce into alternating current for the home. The electricity is used by your appliances first, and any surplus is exported to the grid or stored in a battery. Because most homes use more power in the evening than at midday, a battery can increase the share of solar energy you use yourself.

To estimate the payback period, compare the installed cost with the savings on your bills and any payment for exported power. In sunny regions with high electricity prices, systems often pay for themselves in well under ten years, while panels are commonly guaranteed to produce useful power for twenty-five years.""",
    ),
    (
        "silk-road",
        "https://worldhistory-digest.net/trade/life-on-the-silk-road",
        """Life on the Silk Road

The Silk Road was never a single road. It was a shifting network of caravan routes that linked China with Central Asia, Persia, India and the Mediterranean for well over a thousand years. Silk was one of the most prized goods carried westward, but spices, horses, glassware, paper, precious metals and countless other products moved along the same paths.

Few merchants travelled the whole distance. Instead, goods passed from trader to trader through a chain of oasis towns such as Samarkand, Bukhara and Kashgar, each adding its own profit. Caravans of camels crossed deserts and mountain passes, resting at caravanserais, fortified inns spaced roughly a day's journey apart where travellers could find water, food and protection for their animals.

Ideas travelled as readily as goods. Buddhism spread from India into China along these routes, and later Islam moved eastward through Central Asia. Techniques for making paper reached the Islamic world and eventually Europe, while new crops, musical instruments and artistic styles crossed in both directions.

Diseases followed the same paths. The plague that devastated Europe in the fourteenth century is thought to have travelled along trade routes from Central Asia. By the fifteenth century, sea routes were becoming cheaper and safer for bulk goods, and the overland network slowly declined, although many of its cities remain lively trading centres to this day.""",
    ),
    (
        "chess-opening-principles",
        "https://www.chessclub-academy.com/lessons/opening-principles",
        """Three Principles for Playing the Opening

New chess players often try to memorise long sequences of opening moves, only to find that their opponents rarely play the expected replies. A better approach is to understand a few principles that apply to almost every opening, so that you can find sensible moves even in unfamiliar positions.

The first principle is to fight for the centre. The four central squares are the most important on the board, because pieces placed there control the greatest number of squares and can move quickly to either side. Opening with a central pawn and supporting it with your pieces gives you space and flexibility.

The second principle is to develop your pieces quickly. Knights and bishops should leave their starting squares early, ideally each moving only once, so that they take part in the game. Moving the same piece repeatedly or bringing the queen out too soon often lets the opponent gain time by attacking it with developing moves.

The third principle is to keep your king safe, which usually means castling within the first ten or so moves. Castling tucks the king behind a wall of pawns and connects your rooks. Once these three goals are achieved, you are ready for the middle game, with a coherent position and a clear idea of where your pieces belong.""",
    ),
    (
        "sleep-hygiene",
        "https://wellbeing-weekly.org/sleep/habits-for-better-sleep",
        """Everyday Habits for Better Sleep

Sleep affects nearly every aspect of health, from memory and mood to the immune system. Yet many adults regularly get less than the seven to nine hours recommended by sleep researchers. Medical conditions sometimes play a role, but for many people a handful of daily habits make a noticeable difference.

The most powerful habit is consistency. Going to bed and getting up at roughly the same time every day, including at weekends, anchors the body clock. Morning daylight reinforces the rhythm, so a short walk outside soon after waking is surprisingly effective.

What you do in the evening matters as well. Caffeine can linger in the body for many hours, so an afternoon coffee may still be affecting you at bedtime. Alcohol might make you drowsy at first, but it fragments sleep later in the night. Heavy meals close to bedtime can cause discomfort, while a light snack is usually fine.

Finally, make the bedroom a place for sleep. A cool, dark and quiet room helps, and many people find that screens are best put away half an hour before bed. If you lie awake for a long time, getting up and doing something calm in dim light until you feel sleepy works better than tossing and turning. Persistent problems are worth discussing with a doctor.""",
    ),
]
ARTICLES += [
    (
        "coral-bleaching",
        "https://oceanwatch.org/reefs/what-causes-coral-bleaching",
        """What Causes Coral Bleaching?

Coral reefs owe their colour to tiny algae called zooxanthellae that live inside the tissues of coral polyps. The relationship benefits both partners: the algae receive shelter and nutrients, while the coral receives most of its energy from the sugars the algae produce through photosynthesis.

When the water becomes too warm for too long, this partnership breaks down. Heat stress damages the algae's photosynthetic machinery, and they begin to produce harmful compounds. The coral responds by expelling them, and without the algae its tissue becomes transparent, revealing the white limestone skeleton beneath. This is what scientists call bleaching.

A bleached coral is not dead, but it is starving. If temperatures return to normal within a few weeks, the coral can take up new algae and recover. If the heat persists, many corals die, and the reef may become covered in seaweed instead. Recovery from severe bleaching can take a decade or more, and repeated events leave little time between them.

Rising ocean temperatures are the main driver of mass bleaching, which has struck reefs around the world several times since the 1990s. Pollution, sediment from land and overfishing add to the stress. Protecting water quality and fish populations helps reefs cope, but researchers agree that their long-term survival depends on limiting further warming.""",
    ),
    (
        "cover-letter",
        "https://careerlaunch-guide.com/applications/writing-a-cover-letter",
        """Writing a Cover Letter That Gets Read

A cover letter is your chance to explain why you want a particular job and why you would be good at it, in a way that a list of qualifications cannot. Recruiters often skim dozens of applications, so a focused letter of three or four short paragraphs works best.

Open by naming the position and saying briefly what draws you to the organisation. Generic flattery is easy to spot, so mention something specific, such as a project they have completed, a value they describe on their website or the way they serve their customers.

The middle of the letter should connect your experience to the requirements in the job advert. Choose two or three examples and describe what you did and what resulted from it. Concrete details are far more persuasive than adjectives: saying that you reduced processing time by a third tells the reader more than calling yourself efficient and hard-working.

Close by restating your interest and saying that you would welcome the chance to discuss the role. Keep the tone professional but natural, as if you were speaking to a respected colleague. Before sending, read the letter aloud to catch awkward sentences, check the spelling of every name, and make sure you have not left in details from an application to a different company.""",
    ),
    (
        "castle-construction",
        "https://medievalbuilders.org/architecture/how-castles-were-built",
        """How Medieval Castles Were Built

The great stone castles of medieval Europe took years and sometimes decades to build, and they required a small army of skilled workers. Master masons designed the structure and supervised construction, while quarrymen, carpenters, smiths, mortar makers and hundreds of labourers carried out the work.

Many early castles were built of earth and timber, with a wooden tower on a raised mound known as a motte. These could be thrown up in weeks, which made them ideal for securing newly conquered territory. Over time they were replaced with stone, which resisted fire and siege engines far better.

Stone had to be quarried, shaped and hauled to the site, often by cart or by boat along rivers. Walls were usually built with two faces of carefully dressed stone filled in between with rubble and lime mortar. Wooden scaffolding was anchored into the walls as they rose, and the square holes left behind can still be seen in many ruins today. Heavy blocks were lifted with cranes powered by men walking inside large treadwheels.

Defensive features evolved as siege techniques improved. Round towers replaced square ones because they were harder to undermine and deflected projectiles. Gatehouses grew elaborate, with portcullises, murder holes and drawbridges, while concentric designs surrounded the inner castle with a second ring of walls.""",
    ),
    (
        "noise-cancelling",
        "https://soundlab-reviews.com/explainers/how-noise-cancelling-works",
        """How Noise-Cancelling Headphones Work

Active noise cancellation can make the drone of an aircraft cabin almost disappear, yet the principle behind it is surprisingly simple. Sound travels as waves of high and low pressure, and two waves that are exactly out of step cancel each other when they meet.

Noise-cancelling headphones contain small microphones that continuously listen to the sound around the listener. A processor analyses this noise and generates a matching signal with the pressure pattern inverted, which the speakers play along with the music. When the original noise and the inverted signal reach the ear together, much of the noise is cancelled.

The technique works best on steady, low-pitched sounds such as engines, air conditioning and the rumble of trains. These change slowly and predictably, giving the electronics time to respond. Sudden or high-pitched sounds, like voices or a dropped plate, are harder to cancel, so headphones rely on the physical seal of the ear cushions to block them passively.

Designers must balance several trade-offs. Aggressive cancellation can create a faint hiss or a sensation of pressure that some listeners find uncomfortable, and the processing uses battery power. Many models now offer a transparency mode, which does the opposite: it plays the outside sound through the speakers so that you can hear announcements or talk to someone without removing the headphones.""",
    ),
    (
        "ukulele",
        "https://strumtogether.com/lessons/learning-the-ukulele-as-an-adult",
        """Learning the Ukulele as an Adult

The ukulele has a reputation as the friendliest of instruments, and it is well deserved. With only four nylon strings and a small neck, it is gentle on the fingertips, and many popular songs can be played with just three or four simple chords.

Begin by learning to tune. The standard tuning, from the string closest to your chin, is G, C, E and A, and a clip-on electronic tuner makes the job quick. Strings stretch a great deal when they are new, so expect to retune often during the first week.

The first chords most teachers introduce are C, A minor, F and G. Place your fingertips just behind the metal frets rather than on top of them, press firmly enough for each note to ring clearly, and strum down across all four strings with the side of your thumb or the nail of your index finger. Practise changing between two chords slowly until the movement becomes automatic, then add a third.

Short, regular practice is far more effective than occasional long sessions. Fifteen minutes a day will build the strength and coordination in your hand within a few weeks. Choose songs you genuinely enjoy, play along with recordings, and do not worry about sounding polished. Many towns have ukulele clubs where players of all levels meet to strum together.""",
    ),
    (
        "monarch-migration",
        "https://www.butterfly-trust.org/species/the-monarch-migration",
        """The Long Journey of the Monarch Butterfly

Every autumn, millions of monarch butterflies leave southern Canada and the eastern United States and fly as far as four thousand kilometres to a handful of mountain forests in central Mexico. There they cluster by the thousands on the branches of oyamel fir trees, waiting out the winter in a cool, humid climate that keeps them alive without using up their fat reserves.

What makes the migration extraordinary is that none of the butterflies has made the trip before. The monarchs that fly south are several generations removed from those that left Mexico the previous spring. They navigate using a time-compensated sun compass in their brains, which lets them keep a south-westerly heading as the sun moves across the sky, and they may also sense the Earth's magnetic field.

In spring the overwintering butterflies mate and begin flying north. Females lay their eggs on milkweed, the only plant their caterpillars can eat. Those offspring continue the journey, and it takes several more generations over the summer to recolonise the northern range.

The migration has declined sharply in recent decades. Loss of milkweed across farmland, logging in the wintering forests and extreme weather have all contributed. Planting native milkweed and nectar flowers in gardens and along roadsides is one practical way that people along the route can help.""",
    ),
    (
        "telephone-invention",
        "https://www.inventions-archive.org/communication/the-invention-of-the-telephone",
        """The Invention of the Telephone

In 1876 Alexander Graham Bell received a patent for an apparatus that transmitted speech electrically, and a few days later he spoke the famous words to his assistant Thomas Watson in the next room. The story is often told as the work of a lone genius, but the invention of the telephone was a crowded race.

Several inventors were working on similar ideas at the same time. Elisha Gray filed a notice with the patent office describing a telephone design on the very same day as Bell's application, which led to years of legal disputes. In Italy, Antonio Meucci had demonstrated voice transmission devices decades earlier but lacked the money to secure a lasting patent.

Early telephones were weak and required users to shout. Improvements came quickly, especially the carbon microphone developed by Thomas Edison and others, which made voices much clearer over longer lines. Telephone exchanges, where operators connected calls by plugging cables into switchboards, allowed any subscriber to reach any other.

By the end of the nineteenth century there were hundreds of thousands of telephones in the United States, and networks were spreading across Europe. Automatic exchanges gradually replaced operators in the twentieth century, and long-distance cables, then radio links and satellites, eventually connected the whole world.""",
    ),
    (
        "envelope-budgeting",
        "https://frugal-household.net/budgeting/the-envelope-method",
        """The Envelope Method of Budgeting

Envelope budgeting is one of the oldest and simplest ways to control spending. At the start of each month, you decide how much money to allocate to each category of expenses, such as groceries, transport, entertainment and clothing. Traditionally that amount was withdrawn in cash and placed in a labelled envelope.

The rule is straightforward: when an envelope is empty, spending in that category stops until the next month. If you want to eat out more than planned, you must move money from another envelope, which forces a conscious decision rather than a vague feeling that there is probably enough in the account.

The physical act of handing over cash makes spending feel real in a way that tapping a card does not, and many people find they naturally spend less. For those who rarely use cash, banking apps and budgeting software now offer digital versions, with virtual pots that work in the same way.

Fixed bills such as rent and utilities are usually paid directly from the bank account, so envelopes are most useful for variable spending. It helps to include an envelope for irregular costs, like car repairs or birthday presents, that are easy to forget. After a few months you will have a realistic picture of what your life costs and can adjust the amounts accordingly.""",
    ),
    (
        "first-scarf",
        "https://www.yarnandneedle.com/patterns/knitting-your-first-scarf",
        """Knitting Your First Scarf

A scarf is the classic first knitting project, and for good reason. It is a simple rectangle, it requires only one stitch, and it is useful even if the tension is a little uneven. All you need is a ball or two of medium-weight yarn and a pair of needles of the size recommended on the label.

Choose a smooth, light-coloured yarn for your first attempt. Fluffy or very dark yarns make it hard to see individual stitches, which is frustrating when you are trying to count them or pick up one you have dropped. Wool and wool blends are forgiving because they have a little stretch.

Cast on around twenty-five stitches, then work every row in garter stitch, which simply means knitting every stitch. The result is a squishy, reversible fabric with ridges on both sides that does not curl at the edges. Try to keep the yarn at a steady, relaxed tension; pulling too tightly makes the stitches hard to work.

Keep knitting until the scarf reaches the length you want, joining a new ball at the edge when the first runs out. Then cast off loosely, weave the loose ends into the fabric with a blunt needle, and add a fringe if you like. Small mistakes will hardly show once the scarf is wrapped around someone's neck.""",
    ),
    (
        "rainwater-harvesting",
        "https://waterwise-homes.org/garden/collecting-rainwater",
        """Collecting Rainwater for the Garden

A single roof can shed a surprising amount of water. Each millimetre of rain falling on one square metre of roof yields a litre, so a modest house roof in a moderately wet climate can produce tens of thousands of litres a year. Collecting even part of it reduces the demand on treated mains water and gives plants water they generally prefer.

The simplest system is a rain barrel connected to a downpipe with a diverter. The diverter channels water into the barrel until it is full, then lets the overflow continue down the drain. Place the barrel on a sturdy stand so that a watering can fits under the tap, and fit a lid to keep out leaves, children and mosquitoes.

Larger systems link several tanks together or use an underground tank with a pump. These can supply garden irrigation throughout a dry summer, and with proper filtration some households use harvested rainwater for flushing toilets or running the washing machine.

Rainwater is not suitable for drinking without treatment, because roofs collect dust, bird droppings and debris. Clean gutters regularly and consider a first-flush device, which discards the initial dirty water from each shower. In winter, disconnect or drain small barrels if hard frosts are likely, since ice can split the plastic.""",
    ),
    (
        "bridge-types",
        "https://structures-explained.com/bridges/how-bridges-carry-loads",
        """How Different Bridges Carry Their Loads

Every bridge has the same job: to carry the weight of itself and its traffic across a gap and deliver those forces safely to the ground. Engineers have developed several basic designs to do this, each managing the forces of compression and tension in a different way.

The beam bridge is the simplest. A rigid deck rests on supports at each end, and when a load presses down, the top of the beam is squeezed in compression while the bottom is stretched in tension. Beams become inefficient over long distances, so they are used mainly for short spans or combined with many intermediate piers.

An arch turns the load into compression almost entirely, pushing outwards and downwards into the abutments at either end. Because stone and concrete are very strong in compression, arches built from these materials have stood for centuries. Their weakness is the need for solid ground to resist the outward thrust.

Suspension bridges do the opposite. The deck hangs from vertical cables attached to two main cables draped over tall towers and anchored firmly at each end. Steel is excellent in tension, which allows suspension bridges to span well over a kilometre. Cable-stayed bridges, in which cables run directly from the towers to the deck, have become popular for medium spans because they are stiff and economical to build.""",
    ),
    (
        "marie-curie",
        "https://www.science-biographies.org/physics/marie-curie",
        """Marie Curie and the Discovery of Radioactivity

Marie Sklodowska Curie was born in Warsaw in 1867, at a time when women could not attend university in Poland. She studied in secret before moving to Paris, where she earned degrees in physics and mathematics at the Sorbonne while living on very little money.

In 1896 Henri Becquerel discovered that uranium salts emitted mysterious rays. Curie chose these rays as the subject of her doctoral research and found that their strength depended only on the amount of uranium present, suggesting that the radiation came from the atoms themselves. She coined the word radioactivity to describe this property.

Working with her husband Pierre, she noticed that certain uranium ores were far more radioactive than their uranium content could explain. After processing tonnes of ore in a poorly equipped shed, they identified two new elements, which they named polonium, after her homeland, and radium. In 1903 the Curies shared the Nobel Prize in Physics with Becquerel, and in 1911 Marie received a second Nobel Prize, in chemistry, making her the first person to win in two sciences.

During the First World War she developed mobile radiography units that helped surgeons locate bullets and shrapnel. Years of exposure to radiation damaged her health, and she died in 1934. Her notebooks remain radioactive and are stored in lead-lined boxes.""",
    ),
    (
        "urban-heat-island",
        "https://citiesandclimate.org/research/the-urban-heat-island-effect",
        """The Urban Heat Island Effect

On a summer evening, the centre of a large city can be several degrees warmer than the surrounding countryside. This difference, known as the urban heat island effect, has been measured in cities all over the world and grows stronger as they expand.

Several factors combine to produce it. Dark surfaces such as asphalt and roofing absorb a large share of incoming sunlight and release the heat slowly after sunset. Buildings, roads and pavements replace vegetation and soil, which would otherwise cool the air as water evaporates from them. Tall buildings trap heat between them and block the wind, while cars, air conditioners and industry add heat of their own.

The consequences go beyond discomfort. Hot nights prevent people's bodies from recovering after hot days, which increases the risk of illness and death during heatwaves, particularly for older residents. Higher temperatures also raise energy demand for cooling and can worsen air pollution.

Cities are testing many remedies. Planting street trees and creating parks provides shade and evaporative cooling. Light-coloured or reflective roofs and pavements absorb less sunlight, and green roofs covered with plants insulate buildings while cooling the air around them. Even small changes, such as replacing a car park with trees, can measurably lower local temperatures.""",
    ),
    (
        "fresh-pasta",
        "https://www.cucina-di-casa.com/recipes/fresh-egg-pasta-by-hand",
        """Making Fresh Egg Pasta by Hand

Fresh pasta requires only flour and eggs, yet the difference between homemade tagliatelle and the dried pasta from a packet is remarkable. The traditional ratio in northern Italy is roughly one large egg for every hundred grams of flour, and the finely milled flour labelled tipo 00 gives the silkiest result.

Pile the flour on a clean work surface, make a well in the centre and crack the eggs into it. Beat the eggs with a fork, gradually drawing in flour from the inner wall of the well until a shaggy dough forms. Then use your hands to bring everything together and knead for eight to ten minutes, until the dough is smooth and springs back when pressed.

Wrap the dough and let it rest for at least half an hour at room temperature. Resting relaxes the gluten, which makes the dough much easier to roll thin. Roll it out with a long rolling pin or a pasta machine, working in small portions and keeping the rest covered so that it does not dry out.

For ribbon pasta, dust the thin sheets with flour, roll them up loosely and cut them into strips with a sharp knife. Shake the ribbons apart and cook them in plenty of salted boiling water. Fresh pasta needs only two or three minutes, so have your sauce ready before it goes into the pot.""",
    ),
    (
        "public-libraries",
        "https://communityinfrastructure.org/essays/why-public-libraries-still-matter",
        """Why Public Libraries Still Matter

It is sometimes suggested that the internet has made public libraries obsolete. Visit a busy branch on a weekday afternoon, however, and you will find a very different picture: students revising, job seekers printing applications, parents at a story session with their toddlers and older residents getting help with online forms.

Libraries remain one of the few indoor public spaces where nobody is expected to buy anything. For people without a quiet room at home, a reliable computer or a fast connection, that access is essential. Librarians help visitors find trustworthy information, navigate government services and learn digital skills, tasks that have become more important as more of daily life moves online.

Lending has also changed. Alongside printed books, many libraries now lend ebooks, audiobooks, musical instruments, tools and even seeds for the garden. Others run makerspaces with three-dimensional printers and sewing machines, or host language cafes and clubs where neighbours meet.

Research on reading consistently finds that children who have access to a wide range of books read more and do better at school. Libraries provide that access regardless of family income. For these reasons, many communities regard a well-staffed library not as a luxury but as basic infrastructure, as valuable as parks and pavements.""",
    ),
    (
        "photosynthesis",
        "https://biology-basics.net/plants/how-photosynthesis-works",
        """How Photosynthesis Works

Photosynthesis is the process by which plants, algae and some bacteria capture the energy of sunlight and store it in the chemical bonds of sugar. Almost all life on Earth depends on it, either directly or by eating organisms that do, and it is the source of the oxygen in the air we breathe.

The process takes place mainly in the leaves, inside structures called chloroplasts. These contain the green pigment chlorophyll, which absorbs red and blue light strongly while reflecting green light, which is why leaves look green to us.

Photosynthesis happens in two linked stages. In the light-dependent reactions, energy absorbed by chlorophyll is used to split water molecules. This releases oxygen as a by-product and produces energy-carrying molecules called ATP and NADPH. In the second stage, known as the Calvin cycle, the plant uses that stored energy to combine carbon dioxide from the air into sugars. The enzyme responsible for capturing carbon dioxide, called rubisco, is thought to be the most abundant protein on the planet.

The sugars made during photosynthesis fuel the plant's growth and are used to build cellulose, the tough material of cell walls. Factors such as light intensity, temperature and the concentration of carbon dioxide all limit how quickly photosynthesis can proceed.""",
    ),
    (
        "earthquake-preparedness",
        "https://www.readyhome-safety.org/hazards/preparing-for-an-earthquake",
        """Preparing Your Home for an Earthquake

Earthquakes strike without warning, and most injuries are caused not by the shaking itself but by falling furniture, broken glass and collapsing objects. A few hours of preparation can make a home much safer.

Start by looking around each room and asking what could fall. Tall bookcases, wardrobes and televisions should be fixed to the wall with brackets or straps. Heavy items belong on lower shelves, and pictures and mirrors should not hang above beds or sofas. Latches on kitchen cupboards keep plates and jars from spilling across the floor.

Every household should also keep an emergency kit. It should hold enough water and non-perishable food for at least three days, a torch, a battery or wind-up radio, a first aid kit, essential medicines, copies of important documents and some cash. Keep sturdy shoes near the bed, since broken glass is common after a strong quake.

Finally, agree on a plan. Everyone should know how to shut off gas and water, where to meet if the family is separated, and who to contact outside the area. Practise the recommended response: drop to your hands and knees, take cover under a sturdy table, and hold on until the shaking stops. Staying indoors is generally safer than running outside during the shaking.""",
    ),
    (
        "history-of-tea",
        "https://www.leafandcup.com/history/a-short-history-of-tea",
        """A Short History of Tea

According to a Chinese legend, tea was discovered nearly five thousand years ago when leaves from a wild tree drifted into a pot of water being boiled for the emperor Shennong. Whatever the truth of the story, tea was certainly being drunk in south-west China by the third century, first as a medicine and later as an everyday pleasure.

Under the Tang dynasty, tea culture flourished. The scholar Lu Yu wrote the Classic of Tea, a detailed guide to growing, preparing and serving it. In this period, tea was often pressed into bricks, ground into powder and whisked with water, a method that Buddhist monks carried to Japan, where it developed into the tea ceremony.

Tea reached Europe in the early seventeenth century through Dutch and Portuguese traders. It became fashionable in England after the marriage of Charles the Second to Catherine of Braganza, a Portuguese princess who loved the drink. Demand grew so fast that the British East India Company's tea trade became a major force in world politics, contributing to conflicts in China.

To break the Chinese monopoly, the British established vast plantations in India and Sri Lanka in the nineteenth century. Today tea is the most widely consumed drink in the world after water, with China, India and Kenya among the largest producers.""",
    ),
    (
        "ev-batteries",
        "https://electricdrive-explained.com/technology/electric-car-batteries",
        """What Is Inside an Electric Car Battery?

The battery pack is the most expensive and most important component of an electric car. It is built from thousands of individual lithium-ion cells, similar in principle to those in a phone, grouped into modules and wrapped in a protective casing that usually forms part of the car's floor.

Each cell has a positive electrode, a negative electrode and an electrolyte between them. During charging, lithium ions travel from the positive electrode to the negative one, which is usually made of graphite; during driving they flow back, releasing energy that powers the motor. The chemistry of the positive electrode largely determines the battery's characteristics. Cells using nickel, manganese and cobalt store a lot of energy for their weight, while lithium iron phosphate cells store somewhat less but last longer and avoid cobalt.

Temperature has a strong effect on performance. Cold weather slows the chemical reactions and reduces range, while excessive heat speeds up wear. Modern cars manage this with liquid cooling and heating systems that keep the cells in a comfortable range.

Batteries gradually lose capacity with age and use, but real-world data shows that most keep the large majority of their capacity after many years. When a pack is no longer suitable for a car, it can be reused for stationary energy storage or recycled to recover valuable metals.""",
    ),
    (
        "pottery-wheel",
        "https://clayandkiln-studio.com/techniques/centering-clay-on-the-wheel",
        """Centering Clay on the Potter's Wheel

Every pot thrown on a wheel begins with centering, the process of making a lump of clay spin perfectly evenly around the wheel's axis. It is the skill beginners find most frustrating, and it is worth mastering before anything else, because an off-centre lump will wobble and tear as soon as you try to open it.

Start with well-wedged clay that is free of air bubbles and roughly shaped into a cone. Slap it firmly onto the middle of the dry wheel head so that it sticks, wet your hands and the clay, and set the wheel spinning at a fairly high speed.

Brace your elbows against your thighs or the edge of the splash pan. Your arms should be steady, and your body weight, not the strength of your hands, should do the work. Press inward and downward with the side of one palm while the other hand steadies the clay, then squeeze the clay up into a tall cone and push it back down again. Repeating this coning a few times aligns the clay particles and reveals any wobble.

The clay is centred when it feels completely still beneath your hands, as if it were not moving at all. Release your pressure slowly, because lifting your hands away suddenly can throw it off again.""",
    ),
]
ARTICLES += [
    (
        "lighthouse-keepers",
        "https://maritime-heritage.org/stories/the-lives-of-lighthouse-keepers",
        """The Lives of Lighthouse Keepers

For nearly two centuries, lighthouses depended on keepers who lived beside the light and tended it through every night of the year. Their main task was to keep the lamp burning brightly and the lens spotless, since a dim or failed light could send a ship onto the rocks.

The work was demanding and repetitive. Before electricity, keepers trimmed wicks, refilled oil reservoirs and wound the clockwork that rotated the lens, sometimes every few hours through the night. In daytime they polished brass, cleaned soot from the glass, painted the tower and kept detailed logs of the weather and passing vessels.

Life on remote rock stations could be lonely. Keepers often worked in teams of three, rotating between weeks at the station and time ashore with their families. Storms could delay relief boats for days or weeks, and supplies sometimes ran short. On lighthouses built on the mainland or larger islands, whole families lived at the station, and children grew up with the sea on every side.

Automation gradually made keepers unnecessary. Electric lamps with automatic bulb changers, remote monitoring and, later, satellite navigation reduced the need for people on site. Many former keepers' cottages are now museums or holiday lets, where visitors can glimpse the routine of a vanished profession.""",
    ),
    (
        "octopus-intelligence",
        "https://deepblue-creatures.org/cephalopods/how-clever-is-an-octopus",
        """How Clever Is an Octopus?

Octopuses are among the most intelligent invertebrates known. They solve puzzles, open screw-top jars to reach the food inside, and have been filmed carrying coconut shells across the seabed to use as portable shelters. In aquariums they are notorious for escaping from tanks and for recognising individual keepers.

Their intelligence is organised very differently from ours. An octopus has around five hundred million neurons, a number comparable to that of a dog, but roughly two thirds of them are found in its arms rather than in its brain. Each arm can taste, touch and make simple decisions on its own, so that an octopus can explore a crevice with one arm while its attention is elsewhere.

This remarkable nervous system evolved entirely separately from that of vertebrates. The last common ancestor of humans and octopuses was probably a simple worm-like animal living more than five hundred million years ago. Studying octopuses therefore offers scientists a rare chance to see how complex minds can arise along a completely different path.

Their intelligence is all the more surprising given how short their lives are. Most species live only a year or two, and the mother usually dies shortly after her eggs hatch. Everything an octopus knows, it must learn within that brief span, largely on its own.""",
    ),
    (
        "map-projections",
        "https://cartography-corner.com/basics/why-every-world-map-is-wrong",
        """Why Every World Map Is Distorted

The Earth is close to a sphere, and a sphere cannot be flattened onto a sheet of paper without stretching or tearing it. Every flat map of the world must therefore distort something: shapes, areas, distances or directions. The rules used to transfer positions from the globe to the page are called map projections, and cartographers choose among them depending on what a map is for.

The Mercator projection, published in 1569, was designed for sailors. It preserves angles, so a straight line drawn on the map corresponds to a constant compass bearing. The price is a dramatic exaggeration of areas near the poles. On a Mercator map Greenland appears roughly as large as Africa, although Africa is in fact about fourteen times larger.

Equal-area projections, such as the Mollweide or the Gall-Peters, show the true relative sizes of countries, but they squash and stretch shapes, especially near the edges. Compromise projections such as the Robinson and the Winkel tripel do not preserve anything exactly but keep all distortions moderate, which is why they are popular for atlases and classroom wall maps.

Online maps mostly use a variant of Mercator, because it keeps streets meeting at right angles when you zoom into a city. When looking at a whole continent, it is worth remembering how much the projection can mislead.""",
    ),
    (
        "container-shipping",
        "https://logistics-review.com/shipping/how-the-shipping-container-changed-trade",
        """How the Shipping Container Changed World Trade

Before the 1950s, loading a cargo ship was slow, expensive work. Goods arrived at the docks in sacks, barrels and crates of every size, and gangs of dockworkers carried them aboard piece by piece. A ship could spend a week or more in port being loaded and unloaded, and theft and damage were common.

The standard shipping container changed all of this. In 1956 the American trucking entrepreneur Malcolm McLean sent a converted tanker from New Jersey to Texas carrying fifty-eight metal boxes that could be lifted straight from truck trailers onto the ship. Within two decades, international standards fixed the dimensions of containers and the fittings at their corners, so that the same box could move between ships, trains and lorries anywhere in the world.

The savings were enormous. Cranes could move a container every minute or two, ships spent hours rather than days in port, and the cost of loading fell dramatically. Ports were rebuilt around vast container terminals, often far from the old city docks, and the number of dockworkers fell sharply.

Cheap, reliable shipping made it practical to manufacture goods wherever costs were lowest and send them across oceans. Today the largest ships carry more than twenty thousand containers, and most of the manufactured goods in any shop have spent part of their journey inside one.""",
    ),
    (
        "making-jam",
        "https://www.preservingpantry.com/basics/making-jam-that-sets",
        """Making Jam That Sets

Homemade jam depends on three ingredients working together: fruit, sugar and pectin, a natural substance found in the cell walls of fruit. When they are boiled together with enough acid, the pectin forms a network that traps the liquid and turns it into a soft gel.

Fruits vary widely in pectin. Apples, redcurrants, gooseberries and citrus peel are rich in it, while strawberries, cherries and ripe pears contain very little. Low-pectin fruit can be combined with a high-pectin one, or helped with lemon juice and a little commercial pectin. Slightly underripe fruit contains more pectin than very ripe fruit, so a mix of the two gives both flavour and set.

Cook the fruit gently first to soften it and release the pectin, then add warmed sugar and stir until it has completely dissolved before bringing the mixture to a rolling boil. Boiling too long darkens the jam and spoils its flavour, so start testing early. The simplest method is the wrinkle test: put a spoonful on a cold saucer, wait a minute and push it with a finger. If the surface wrinkles, the jam is ready.

Pour the hot jam into clean, sterilised jars, leaving a small space at the top, and seal them immediately. Stored in a cool, dark cupboard, well-made jam keeps for a year or more.""",
    ),
    (
        "lawn-mower-maintenance",
        "https://www.garden-machinery-help.com/care/servicing-a-petrol-lawn-mower",
        """Servicing a Petrol Lawn Mower

A petrol mower that is looked after properly will start easily and run for many years. Most of the work can be done at home in an hour at the beginning of each season, and it costs far less than a visit to a repair shop.

Safety comes first. Before touching the blade or the underside of the deck, pull the spark plug lead off the plug so that the engine cannot start accidentally. Work outdoors or in a well-ventilated space, and let the engine cool completely if it has been running.

Change the oil once a year, or more often if you mow a large area. Run the engine for a few minutes beforehand so that the oil flows freely, then drain it into a container and refill with the type and quantity given in the manual. Take the old oil to a recycling centre rather than pouring it away. Next, check the air filter. Paper filters should be replaced when they are dirty, while foam filters can be washed in soapy water, dried and lightly oiled.

Finally, look at the blade. A blunt blade tears the grass, leaving ragged tips that turn brown. Remove it, sharpen it with a file while keeping the original angle, and check that it is balanced before refitting it. Fit a new spark plug every couple of seasons.""",
    ),
    (
        "new-orleans-jazz",
        "https://musichistory-notes.org/genres/the-birth-of-jazz-in-new-orleans",
        """The Birth of Jazz in New Orleans

Jazz emerged in New Orleans around the beginning of the twentieth century, and the city's unusual history helps explain why. As a port that had been French and Spanish before it became American, New Orleans mixed African, Caribbean, European and American musical traditions more freely than almost anywhere else in the country.

On Sunday afternoons in Congo Square, enslaved and free people of African descent had gathered for generations to dance and drum. Brass bands played for parades, picnics and funerals, marching solemnly to the cemetery and then breaking into lively music on the way back. Ragtime piano, blues from the rural South and the hymns of Black churches all added ingredients to the mix.

Early jazz bands typically featured a cornet or trumpet leading the melody, a clarinet weaving decorative lines around it and a trombone adding a rhythmic bass part, supported by banjo, drums and tuba or string bass. The musicians improvised together, creating the dense, joyful texture now called collective improvisation.

Figures such as Buddy Bolden, Jelly Roll Morton and King Oliver shaped the new style, and a young Louis Armstrong learned his craft in the city's bands before moving north. When the first jazz records were made in 1917, the music quickly spread to Chicago, New York and eventually the rest of the world.""",
    ),
    (
        "wind-turbines",
        "https://cleanpower-explained.org/wind/how-wind-turbines-make-electricity",
        """How Wind Turbines Make Electricity

A modern wind turbine is a tall steel tower carrying a nacelle, a housing about the size of a bus, with three long blades attached to a hub at the front. When the wind blows, the blades turn the hub, which drives a generator inside the nacelle to produce electricity.

The blades work much like aircraft wings. Their curved profile makes the air flow faster over one side than the other, creating a pressure difference that produces lift. Because the blades are attached to the hub, this lift turns them around the rotor instead of raising them upwards. The blades are also twisted along their length, since the tips move far faster than the root.

Turbines are designed to operate across a range of wind speeds. They begin generating in a gentle breeze, reach their full rated power in a strong wind and shut down in storms to avoid damage. Motors turn the nacelle to face the wind and change the angle of the blades to control their speed.

The power available in the wind rises with the cube of its speed, so a site with slightly stronger winds produces much more energy. That is one reason turbines have grown so tall, reaching steadier winds higher up, and why many new wind farms are built offshore, where winds are strong and consistent.""",
    ),
    (
        "desert-plants",
        "https://arid-botany.org/adaptations/how-desert-plants-survive",
        """How Desert Plants Survive Without Rain

Deserts receive so little rain that most plants would wither within weeks. Those that thrive there have evolved a remarkable variety of strategies for finding water, storing it and losing as little of it as possible.

Cacti and other succulents store water in thick, fleshy stems or leaves. A large saguaro cactus can hold hundreds of litres after a storm, and its pleated stem expands like an accordion as it fills. Most cacti have no true leaves at all; their spines are modified leaves that shade the stem, deter thirsty animals and reduce air movement across the surface.

Many desert plants keep the tiny pores on their surfaces, called stomata, closed during the heat of the day to avoid losing water. They open them at night to take in carbon dioxide, which they store chemically until sunlight returns. This special form of photosynthesis allows them to function with a fraction of the water a typical plant requires.

Other species avoid drought rather than enduring it. Some shrubs send roots tens of metres down to reach groundwater, while others spread shallow roots widely to capture brief showers. Desert annuals spend most of their lives as seeds, germinating only after heavy rain and completing their whole life cycle within a few weeks, carpeting the ground with flowers.""",
    ),
    (
        "black-holes",
        "https://astronomy-for-everyone.org/cosmos/what-is-a-black-hole",
        """What Is a Black Hole?

A black hole is a region of space where matter is packed so densely that its gravity prevents anything, even light, from escaping. The boundary beyond which escape is impossible is called the event horizon. Anything that crosses it is cut off from the rest of the universe.

Most black holes form when very massive stars reach the end of their lives. Once such a star runs out of fuel, its core can no longer support itself against gravity and collapses, while the outer layers are blasted away in a supernova. If the remaining core is massive enough, nothing can halt the collapse, and a black hole is born.

At the centres of most large galaxies sit supermassive black holes with millions or billions of times the mass of the Sun. The one at the heart of our own galaxy, known as Sagittarius A star, is about four million solar masses. How such giants grew so large so early in cosmic history is still an active question for astronomers.

Although black holes themselves emit no light, they can be detected by their effects. Gas falling towards them heats up and glows brightly, stars orbit them at high speeds, and colliding black holes send out gravitational waves. In 2019 astronomers released the first image of the glowing ring surrounding a black hole's shadow.""",
    ),
    (
        "history-of-chocolate",
        "https://www.cacao-chronicles.com/history/from-bitter-drink-to-chocolate-bar",
        """From Bitter Drink to Chocolate Bar

Long before chocolate became a sweet treat, it was a bitter, frothy drink prized in Mesoamerica. The Olmec may have been the first to use cacao more than three thousand years ago, and later the Maya and the Aztecs valued it so highly that cacao beans served as a form of currency.

The Aztecs prepared chocolate by grinding roasted beans into a paste and mixing it with water, maize and spices such as chilli. The drink was poured from a height to create foam, which was considered the best part. It was consumed mainly by nobles, warriors and merchants, and was associated with strength and ceremony.

Spanish conquistadors brought cacao to Europe in the sixteenth century. Spaniards sweetened the drink with sugar and flavoured it with cinnamon and vanilla, and it became fashionable among the aristocracy of Spain, then France, Italy and England. Chocolate houses appeared in London in the seventeenth century alongside coffee houses.

The chocolate bar is a much later invention. In 1828 the Dutch chemist Coenraad van Houten patented a press that separated cocoa butter from the beans, producing cocoa powder. Later in the century, British makers created the first solid eating chocolate, Swiss chocolatiers added milk powder, and Rodolphe Lindt invented conching, a process that gives chocolate its smooth texture.""",
    ),
    (
        "home-insulation",
        "https://www.warmhome-guide.com/efficiency/where-your-home-loses-heat",
        """Where Your Home Loses Heat

Heating is one of the largest household expenses in cold climates, and much of the warmth produced by a boiler or heat pump simply leaks away. Knowing where heat escapes helps you decide which improvements are worth the money.

In a typical uninsulated house, roughly a quarter of the heat is lost through the roof, a third through the walls, and smaller shares through windows, floors and draughts. Because warm air rises, loft insulation is usually the cheapest and most effective place to start. Laying thick rolls of mineral wool between and over the joists can pay for itself within a few years.

Walls are more complicated. Houses built with a cavity between two layers of brick can have insulation injected into the gap, a quick job that causes little disruption. Solid walls need insulation fixed to the inside or outside surface, which is more expensive but can dramatically reduce heat loss.

Draughts are easy to overlook. Gaps around doors, windows, floorboards and letterboxes let cold air in and warm air out, and sealing them with inexpensive strips and brushes makes rooms feel noticeably more comfortable. Keep some ventilation, however: kitchens and bathrooms need extractor fans or trickle vents to remove moisture, otherwise condensation and mould can develop.""",
    ),
    (
        "teaching-phonics",
        "https://earlyreaders-network.org/parents/how-children-learn-to-read-with-phonics",
        """How Children Learn to Read with Phonics

Phonics teaches children to connect the sounds of spoken language with the letters that represent them. Instead of memorising whole words by their shape, children learn that the letters s, a and t stand for particular sounds, and that blending those sounds together produces the word sat.

Most programmes introduce a handful of common letters first, chosen so that children can start reading simple words within weeks. They then move on to pairs of letters that make a single sound, such as sh, ch and ee, and gradually to the many alternative spellings that make English notoriously irregular.

Blending and segmenting are the two core skills. Blending means saying the sounds in order and merging them into a word, which is needed for reading. Segmenting means hearing a spoken word and breaking it into its sounds, which is needed for spelling. Short, daily practice with both, using games and small decodable books, builds fluency steadily.

Parents can help at home without special materials. Reading aloud together every day, pointing out letters on signs and packaging, and playing word games such as I spy with sounds all reinforce what children learn at school. Phonics is only the start, however: understanding what a text means depends on vocabulary and conversation.""",
    ),
    (
        "yellowstone-wolves",
        "https://wildlands-journal.org/conservation/wolves-return-to-yellowstone",
        """The Return of Wolves to Yellowstone

Grey wolves were eliminated from Yellowstone National Park by the 1920s, hunted and poisoned as a threat to livestock. For the next seventy years the park had no wolves at all, and the consequences spread through the ecosystem in ways that only became clear later.

Without their main predator, elk became numerous and lingered in river valleys, grazing young willow and aspen trees so heavily that few grew into mature stands. With fewer trees along the banks, beavers had less food and building material, and streams eroded more quickly.

In 1995 and 1996, thirty-one wolves captured in Canada were released into the park. The population grew quickly and has fluctuated at around one hundred in recent years. Elk numbers fell, and in some places the survivors changed their behaviour, spending less time in open valleys where they were vulnerable.

Researchers have documented the recovery of willows in some areas and the return of beaver colonies, although the extent to which wolves caused these changes is still debated. Other factors, including drought, hunting outside the park and the growing number of bears and cougars, also play a role. What is clear is that the reintroduction has become one of the best-studied experiments in how large predators shape their surroundings.""",
    ),
    (
        "origami",
        "https://www.paperfold-studio.com/learn/an-introduction-to-origami",
        """An Introduction to Origami

Origami is the art of folding a single sheet of paper into a shape without cutting or gluing it. The craft has deep roots in Japan, where folded paper was used in ceremonies centuries ago, but today it is practised around the world by children, artists and even engineers.

Beginners usually start with square paper about fifteen centimetres across. Special origami paper is thin, holds a crease well and is often coloured on one side, which helps distinguish the front from the back, but any thin paper cut into an accurate square will do.

A small set of basic folds underlies almost every model. The valley fold bends the paper towards you, forming a trough, while the mountain fold bends it away, forming a ridge. From these come a handful of standard bases, such as the square base and the bird base, from which hundreds of designs begin. The traditional crane starts from the bird base and is often the first model people learn.

Precision matters more than speed. Lining up corners exactly and running a fingernail along each crease make later steps much easier. Origami diagrams use a standard set of arrows and lines, and learning to read them opens up a huge library of models. The same folding principles help engineers design solar panels and medical devices that unfold once in place.""",
    ),
    (
        "credit-scores",
        "https://moneywise-basics.com/borrowing/how-credit-scores-work",
        """How Credit Scores Work

When you apply for a loan, a mortgage or even a mobile phone contract, the lender wants to know how likely you are to repay. A credit score is a number that summarises that risk, calculated by credit reference agencies from the information in your credit report.

Your report lists your borrowing accounts, such as credit cards, loans and mortgages, together with your payment history on each. Missed or late payments have the greatest negative effect, so paying at least the minimum on time every month is the single most important habit for a healthy score.

The amount of credit you use relative to your limits also matters. Someone who regularly uses nearly all of their available credit appears more stretched than someone who uses a small portion of it. The length of your credit history plays a part too, which is why young adults with no borrowing history sometimes struggle to get credit despite having done nothing wrong.

Each application for credit usually leaves a record called a hard search, and many applications in a short period can lower your score temporarily. Checking your own report does not count as a hard search, and it is worth doing once a year to make sure there are no errors, such as accounts you never opened or old addresses.""",
    ),
    (
        "papyrus",
        "https://ancientworld-review.org/writing/how-egyptians-made-papyrus",
        """How the Ancient Egyptians Made Papyrus

For thousands of years, the ancient Egyptians wrote on papyrus, a smooth writing surface made from a tall reed that grew in dense stands along the banks of the Nile. The oldest blank roll discovered dates from around five thousand years ago, and papyrus remained in use across the Mediterranean world until the early Middle Ages.

Making a sheet began with harvesting the triangular stems and stripping away the tough outer rind. The soft inner pith was cut into long, thin strips, which were laid side by side on a flat surface. A second layer of strips was placed on top at right angles to the first. The layers were then pressed or beaten, and the plant's own sap helped bind the strips together as the sheet dried.

After drying, the surface was polished with a smooth stone or shell. Individual sheets were glued end to end to form rolls that could be many metres long. Scribes wrote with reed brushes and inks made from soot or red ochre mixed with gum.

Papyrus survives remarkably well in dry conditions, which is why so many documents have been recovered from Egyptian tombs and rubbish heaps. These finds include letters, tax records, medical texts, contracts and literary works, giving historians an unusually detailed picture of daily life in the ancient world.""",
    ),
    (
        "tree-rings",
        "https://forest-science-today.org/methods/reading-tree-rings",
        """Reading the History Written in Tree Rings

Cut across the trunk of a tree growing in a temperate climate and you will see a series of concentric rings. Each ring usually represents one year of growth: a pale band of wood formed quickly in spring, followed by a darker band formed more slowly in late summer. Counting the rings reveals the tree's age.

The rings record more than age. In good years, with plenty of rain and a long growing season, trees lay down wide rings; in years of drought or cold, the rings are narrow. Because trees across a region respond to the same weather, they share a recognisable pattern of wide and narrow rings, much like a barcode.

Scientists in the field of dendrochronology match these patterns between living trees, old timbers and wood preserved in bogs or buildings. By overlapping samples of different ages, they have built continuous chronologies stretching back more than ten thousand years in some regions. Such records allow archaeologists to date a wooden beam in a medieval house or a Viking ship to the exact year the tree was felled.

Tree rings also help reconstruct past climates. They have revealed ancient megadroughts, the cooling that followed large volcanic eruptions, and periods of warmth long before thermometers existed, providing valuable context for understanding the changes happening today.""",
    ),
    (
        "altitude-sickness",
        "https://highpeaks-trekking.com/safety/understanding-altitude-sickness",
        """Understanding Altitude Sickness

Trekkers heading into high mountains often worry about fitness, but the greatest risk at altitude has little to do with how strong you are. As you climb, the air pressure drops and each breath delivers less oxygen. Above around 2,500 metres, many people begin to feel the effects.

Acute mountain sickness is the most common form. Its symptoms resemble a bad hangover: headache, nausea, tiredness, poor sleep and loss of appetite. It usually appears within hours of arriving at a new height and fades after a day or two as the body adjusts by breathing more deeply and producing more red blood cells.

The key to prevention is a gradual ascent. Above 3,000 metres, experienced guides recommend increasing the altitude at which you sleep by no more than about 300 to 500 metres per day, with a rest day every few days. The saying climb high, sleep low captures a useful tactic: short excursions to a higher point during the day, returning to sleep lower down.

Rarely, altitude illness becomes life-threatening. Fluid can build up in the lungs, causing breathlessness even at rest, or in the brain, causing confusion and loss of coordination. Both are emergencies, and the most effective treatment is to descend immediately, even at night.""",
    ),
    (
        "how-planes-fly",
        "https://aviation-explained.net/basics/how-do-aeroplanes-stay-in-the-air",
        """How Do Aeroplanes Stay in the Air?

An airliner at take-off can weigh several hundred tonnes, yet it rises smoothly into the sky. It does so because its wings produce lift, an upward force generated by the way air flows around them as the aircraft moves forward.

A wing is shaped and angled so that it deflects the oncoming air downwards. By Newton's third law, pushing air down produces an equal and opposite force pushing the wing up. The same process can be described in terms of pressure: air flowing over the curved upper surface speeds up and its pressure falls, while the pressure beneath the wing remains higher. Both descriptions are correct ways of looking at the same physics.

The amount of lift depends on the speed of the aircraft, the density of the air, the area of the wings and the angle at which they meet the airflow. Pilots increase this angle to climb, but only up to a point. If it becomes too steep, the airflow separates from the upper surface, lift collapses and the wing stalls.

During take-off and landing, when the aircraft is flying slowly, pilots extend flaps and slats from the wings. These change the wing's shape and increase its area, producing enough lift at lower speeds to allow safe operation on runways of practical length.""",
    ),
]
ARTICLES += [
    (
        "sundials",
        "https://www.timekeeping-history.org/instruments/how-sundials-tell-time",
        """How Sundials Tell the Time

Long before mechanical clocks, people measured the hours by watching shadows. A sundial does this in an organised way: a fixed pointer called the gnomon casts a shadow onto a surface marked with hour lines, and as the sun crosses the sky the shadow sweeps from one line to the next.

For a sundial to work well throughout the year, the edge of the gnomon that casts the shadow must point towards the celestial pole, which means it must be tilted at an angle equal to the local latitude. A dial designed for Edinburgh will therefore give the wrong readings if it is moved to Madrid, because the gnomon would no longer be parallel to the Earth's axis.

Even a perfectly made sundial rarely agrees with a wristwatch. It shows solar time, which is based on the actual position of the sun, whereas clocks show a standardised time shared by a whole zone. The difference also changes during the year because the Earth's orbit is elliptical and its axis is tilted, an effect known as the equation of time, which can amount to about a quarter of an hour.

Many old dials carry a small table that lets the reader correct for this, along with mottoes reminding passers-by that time flies and that the hours pass for everyone.""",
    ),
    (
        "beekeeping-first-year",
        "https://www.apiary-apprentice.org/guides/your-first-year-keeping-bees",
        """Your First Year Keeping Bees

Many people are drawn to beekeeping by the thought of their own honey, but experienced keepers usually advise beginners not to expect a harvest in the first year. A new colony needs its first season to build comb, raise workers and store enough food to survive the winter.

Before buying bees, join a local association and attend a course. Most associations run practical sessions where you can handle frames under supervision, and many have mentors who will visit your hive during your first inspections. You will also learn about the diseases and pests that every keeper must watch for, including the varroa mite.

Inspections in spring and summer are usually made once a week. The aim is to check that the queen is laying, that the colony has space to expand, and that there are no signs of swarming preparations, such as queen cells along the bottom of the frames. Move slowly, work from the side of the hive rather than in front of the entrance, and choose warm, calm days when most foragers are out.

In late summer, assess the colony's stores. If there is not enough honey to last until spring, feed sugar syrup so that the bees can top up their reserves before the weather turns cold.""",
    ),
    (
        "rivers-and-floodplains",
        "https://www.riverscience-notes.org/hydrology/why-rivers-need-floodplains",
        """Why Rivers Need Their Floodplains

A floodplain is the flat land beside a river that is covered by water when the river overflows its banks. For centuries people have drained and built on these fertile, level areas, and in many places the river has been straightened and confined between embankments. Hydrologists increasingly argue that this has made flooding worse downstream.

When a river can spread across its floodplain, the water slows down and a large volume is stored temporarily on the land. The peak of the flood passing downstream is lower and arrives later, giving towns more time to prepare. Confining the river to a narrow channel does the opposite, speeding the water on its way and concentrating it.

Floodplains also trap sediment and nutrients. Each flood leaves a thin layer of silt that enriches the soil, which is why floodplains have always been valued for farming. Wetlands, oxbow lakes and wet meadows on the floodplain provide habitat for birds, fish and insects that depend on the shifting boundary between land and water.

Several countries now reconnect rivers to their floodplains by moving embankments back from the channel, allowing some fields to flood in winter and restoring meanders. These projects are often cheaper than building ever higher walls, and they bring wildlife back at the same time.""",
    ),
    (
        "stargazing-binoculars",
        "https://astronomy-for-everyone.org/observing/stargazing-with-binoculars",
        """Stargazing with Binoculars

Many beginners assume that they need an expensive telescope to enjoy the night sky, yet an ordinary pair of binoculars reveals far more than most people expect. Binoculars are easy to carry, quick to set up and show a wide field of view, which makes finding objects much simpler than with a telescope.

The Moon is the obvious first target. Even modest magnification shows craters, mountain ranges and the dark plains called maria, especially along the terminator, the line between day and night on the lunar surface, where shadows are long and the relief stands out.

Beyond the Moon, binoculars show the four largest moons of Jupiter as tiny points of light lined up beside the planet, changing position from night to night. Star clusters such as the Pleiades look spectacular, and on a dark night away from town lights the Andromeda Galaxy appears as a faint, elongated glow more than two million light years away.

Steadiness matters more than magnification. Rest your elbows on a wall or a car roof, or mount the binoculars on a camera tripod with a simple adapter. Give your eyes at least twenty minutes to adapt to the dark, and use a red torch to read your star chart so that you do not lose that sensitivity.""",
    ),
    (
        "wooden-boat-building",
        "https://www.boatshed-journal.com/craft/building-a-wooden-rowing-boat",
        """Building a Small Wooden Rowing Boat

Building a boat is one of the most rewarding woodworking projects an amateur can undertake. A small rowing dinghy can be made in a garage over a winter, using plywood, epoxy and a set of plans drawn by a designer who has already solved the difficult problems.

Many modern amateur designs use the stitch and glue method. The hull panels are cut from marine plywood according to the plans and then stitched together along their edges with short lengths of copper wire, so that the boat takes its shape almost by itself. The seams are then filled with thickened epoxy and reinforced with strips of glass fibre tape, after which the wires can be removed.

Accuracy at the start saves a great deal of trouble later. Mark out the panels carefully, check the measurements twice and make sure the building frame is level and square. Small errors in the first panels are magnified as the hull closes up, and a twisted hull never rows straight.

Once the hull is sealed and sanded, the boat is finished with seats, rowlocks and paint or varnish. The first launch is a memorable moment, and many builders discover that their second boat is already taking shape in their imagination before the first one reaches the water.""",
    ),
    (
        "language-learning-habits",
        "https://www.polyglot-practice.com/advice/habits-of-successful-language-learners",
        """Habits of Successful Language Learners

People who succeed in learning a foreign language as adults rarely have a special talent. What they usually share is a set of habits that keep them in contact with the language almost every day, long after the first enthusiasm has faded.

The first habit is regular, short practice. Twenty minutes a day builds vocabulary and listening skills far more effectively than a long session once a week, because memory depends on repeated retrieval spread over time. Flashcard programs that schedule reviews at increasing intervals make use of this principle.

The second habit is seeking out real material as early as possible. Podcasts for learners, children's books, subtitled series and simple news articles expose you to the language as it is actually used. Understanding will be partial at first, but the brain gradually learns to recognise patterns and common phrases.

The third habit is speaking before you feel ready. Many learners wait until their grammar is perfect, and that moment never arrives. Conversation exchanges, tutors and language cafes provide low-pressure opportunities to practise, and the mistakes made there are the fastest route to improvement. Finally, successful learners accept that progress is uneven, with plateaus that can last for weeks before a sudden leap forward.""",
    ),
    (
        "fog-formation",
        "https://weather-explained.org/phenomena/how-fog-forms",
        """How Fog Forms

Fog is simply a cloud that touches the ground. It forms when air near the surface cools to the point where it can no longer hold all of its water vapour, and the excess condenses into countless tiny droplets suspended in the air.

The most common type is radiation fog. On clear, calm nights the ground loses heat quickly to the sky, and the air just above it cools too. If the air is moist enough, fog develops in the early hours, often gathering in valleys where cold air drains and pools. The morning sun usually warms the ground and burns the fog away from the edges inward.

Advection fog forms differently. Warm, moist air moves over a colder surface, such as a cool sea or snow-covered ground, and is chilled from below. This type can be thick and persistent and may last all day. The famous summer fogs of San Francisco form when moist Pacific air crosses the cold water of an upwelling current offshore.

Fog is a serious hazard to transport because it reduces visibility, sometimes to just a few metres. Forecasters watch temperature, humidity and wind speed closely on calm evenings, since a difference of a degree or two can decide whether a region wakes up to sunshine or a blanket of grey.""",
    ),
    (
        "public-speaking",
        "https://www.confident-speaker.com/tips/preparing-a-short-talk",
        """Preparing a Short Talk

Most people feel nervous before speaking in public, and a certain amount of tension is useful because it sharpens attention. The best remedy for excessive nerves is thorough preparation, which gives you confidence that you know what you want to say and in what order.

Start by deciding on the single message you want the audience to remember. Everything in the talk should support that message, and material that does not should be cut, however interesting it may be. A short talk with one clear idea is far more effective than a long one that tries to cover everything.

Structure the talk simply. Open with something that catches attention, such as a question, a surprising fact or a brief story. Present two or three main points, each illustrated with a concrete example. Close by restating the main message and, if appropriate, telling the audience what you would like them to do next.

Practise aloud several times, ideally in front of a friend or a camera. Speaking the words reveals awkward phrases and shows whether the talk fits the time available. Use brief notes rather than a full script, look at different people in the room as you speak, and allow yourself to pause. A moment of silence feels long to the speaker but natural to the listener.""",
    ),
    (
        "mushroom-foraging",
        "https://www.woodland-larder.org/foraging/mushroom-foraging-safely",
        """Foraging for Wild Mushrooms Safely

Gathering wild mushrooms in autumn woodland is a pleasure enjoyed by many families across Europe, but it carries real risks. A small number of species are deadly, and some of them closely resemble edible mushrooms that beginners are keen to find.

The golden rule is simple: never eat a wild mushroom unless you are completely certain of its identity. Certainty comes from checking many features together, including the cap, the gills or pores underneath, the stem, any ring or sac at the base, the smell, the colour of the spore print and the habitat. A single photograph or a quick comparison with a picture in a book is not enough.

Beginners are best advised to learn with an experienced guide. Many regions run foraging walks led by mycologists, and local groups often hold identification sessions where finds can be examined. Start by learning the dangerous species first, especially the death cap and the destroying angel, so that you can recognise and avoid them.

Pick only what you need, leave plenty behind for wildlife and for the fungus to spread its spores, and respect local rules, since collecting is restricted in some nature reserves. Cook wild mushrooms thoroughly, and try only a small amount of any species you have not eaten before.""",
    ),
    (
        "ice-cores",
        "https://climate-archives.org/methods/what-ice-cores-reveal",
        """What Ice Cores Reveal About Past Climates

In the centre of Greenland and Antarctica, snow has accumulated year after year for hundreds of thousands of years without melting. As new layers pile up, the older snow beneath is compressed into ice, trapping small bubbles of the air that existed when it fell. Drilling into this ice allows scientists to read a detailed record of past climates.

An ice core is a long cylinder of ice, usually about ten centimetres across, extracted in sections by a hollow drill. The deepest Antarctic cores reach more than three kilometres down and contain ice around eight hundred thousand years old.

The chemistry of the ice itself records temperature. Water molecules containing heavier forms of oxygen and hydrogen condense more readily in cold conditions, so the ratio of heavy to light isotopes in each layer reflects the temperature at the time. The trapped air bubbles preserve samples of the ancient atmosphere, allowing direct measurement of past carbon dioxide and methane concentrations.

Layers of volcanic ash and dust mark major eruptions and dry periods, while changes in sea salt reveal shifts in storminess. Together, these records show that the climate has swung repeatedly between ice ages and warmer periods, and that carbon dioxide and temperature have moved closely together throughout.""",
    ),
    (
        "bread-flour-protein",
        "https://www.breadcraft-journal.com/science/why-bread-flour-is-different",
        """Why Bread Flour Is Different

Walk down the baking aisle of a supermarket and you will find plain flour, self-raising flour, strong bread flour and several others. The most important difference between them is the amount of protein they contain, and in particular the proteins that form gluten.

When flour is mixed with water, two proteins called glutenin and gliadin link together into a stretchy network. Kneading develops and aligns this network, turning a sticky mixture into a smooth, elastic dough. As the yeast produces gas, the gluten traps it in countless small pockets, allowing the dough to rise and giving bread its open, chewy crumb.

Strong bread flour is milled from hard wheat varieties with a protein content of around twelve to fourteen percent, which creates a robust gluten network that can hold a great deal of gas. Plain flour, used for cakes, pastry and sauces, typically contains less protein, so it produces more tender results. Cake flour has even less.

This explains why a loaf made with plain flour often turns out dense and flat, while a sponge made with strong flour can be tough. Choosing the right flour for each recipe is one of the simplest ways to improve home baking.""",
    ),
    (
        "tidal-pools",
        "https://oceanwatch.org/shore/exploring-rock-pools",
        """Exploring Rock Pools at Low Tide

When the tide goes out on a rocky shore, it leaves behind pools of seawater in hollows between the rocks. These rock pools are miniature worlds, home to crabs, shrimps, small fish, anemones, starfish and seaweeds, and exploring them is one of the best ways to discover marine life without getting more than your boots wet.

Life in a rock pool is tougher than it looks. During low tide the water can warm up quickly in the sun, lose oxygen, or become saltier as it evaporates. After heavy rain it may turn almost fresh. The animals that live there are adapted to survive these rapid changes until the sea returns.

To explore responsibly, check the tide times before you go and start as the tide is falling, so that you have plenty of time before it turns. Walk carefully, since wet rocks and seaweed are slippery. Look first without touching, as many creatures are well camouflaged and will only reveal themselves if you wait quietly.

If you lift a stone to look underneath, put it back exactly as you found it, because the animals sheltering there depend on the shade and moisture. Any creature placed in a bucket for a closer look should be kept in cool seawater and returned to the same pool soon afterwards.""",
    ),
]
# --- Good articles that contain e-mail addresses or public IP addresses: kept, but pii_redact must
# remove every listed address from the kept text. (slug, url, text, addresses) --------------------------
PII_ARTICLES: list[tuple[str, str, str, list[str]]] = [
    (
        "library-repair-cafe",
        "https://www.millbrook-library.org/news/repair-cafe-returns",
        """Repair Cafe Returns to Millbrook Library

After a break over the summer, the monthly repair cafe is returning to the community room of Millbrook Library on the first Saturday of every month. Volunteers with skills in electronics, sewing, woodwork and bicycle maintenance will help visitors fix broken household items instead of throwing them away.

Last year the cafe looked at more than four hundred items, from toasters and table lamps to torn jackets and wobbly chairs. Around two thirds of them left the room working again. The volunteers do not simply repair things for you; they explain what went wrong and show you how to do the job yourself, so that you can tackle similar problems at home.

There is no charge, although donations towards spare parts and tea are always welcome. Please bring only items you can carry, and clean them before you arrive. For safety reasons the team cannot work on microwave ovens or anything that runs on gas.

If you would like to join the volunteer team, we would be delighted to hear from you. Please write to the coordinator, Helen Marsh, at helen.marsh@millbrook-library.org with a few words about your skills, or ask at the front desk during opening hours.""",
        ["helen.marsh@millbrook-library.org"],
    ),
    (
        "server-brute-force",
        "https://ops-diary.dev/posts/what-we-learned-from-a-brute-force-attack",
        """What We Learned from a Brute-Force Login Attack

Last Tuesday our monitoring alerted us to an unusual spike in failed logins on one of our web servers. Within an hour, more than thirty thousand attempts had been made against the administrator account, all coming from a small group of addresses. The largest share came from 185.143.223.47, with smaller bursts from 91.240.118.172 shortly afterwards.

None of the attempts succeeded, because password logins for the administrator account had already been disabled in favour of key-based authentication. Still, the flood of requests slowed the server noticeably and filled our logs, so we decided to review our defences.

First, we added rate limiting at the load balancer, so that any client making more than a handful of login attempts per minute is temporarily blocked. Second, we installed a tool that watches the logs and bans addresses that repeatedly fail to authenticate. Third, we moved the administrative interface behind our company network, where it cannot be reached from the public internet at all.

The lesson for us was that good authentication is necessary but not sufficient. An attack that fails can still consume resources and hide other warning signs in the noise. Cheap measures such as rate limiting and narrowing what is exposed to the internet made the next attempt barely noticeable.""",
        ["185.143.223.47", "91.240.118.172"],
    ),
    (
        "choir-auditions",
        "https://www.eastfield-choral-society.org.uk/news/autumn-auditions",
        """Eastfield Choral Society Welcomes New Singers

The Eastfield Choral Society is looking for new members to join us for our autumn season, which ends with a performance of Handel's Messiah in the parish church in December. We are particularly keen to welcome tenors and basses, although singers of every voice type are encouraged to come along.

You do not need to be an experienced performer. Our members include retired teachers, nurses, students and engineers, and several joined having sung only in school. The ability to read music is helpful but not essential, since we provide rehearsal recordings for each part and our musical director takes time to teach new pieces carefully.

Rehearsals take place on Wednesday evenings from half past seven until nine in the hall of the primary school on Station Road, with a break for tea in the middle. New members are invited to attend two rehearsals before deciding whether to join, and there is a short, informal voice placement with the director rather than a formal audition.

To find out more, or to let us know that you plan to come, please contact our membership secretary, Robert Okafor, by writing to r.okafor.choir@gmail.com. You can also speak to any member after one of our concerts.""",
        ["r.okafor.choir@gmail.com"],
    ),
    (
        "bug-report-dns",
        "https://forum.selfhosting-community.net/t/home-server-unreachable-after-router-update",
        """Home Server Unreachable After a Router Update

I am posting this in case it helps someone else, because it took me most of a weekend to work out. After my internet provider pushed a firmware update to my router, my small home server stopped being reachable from outside, even though everything worked perfectly inside the house.

My first thought was that the port forwarding rules had been wiped, but they were all still present. Then I checked the public address that my dynamic DNS service was pointing to. It was still set to 82.165.77.201, the old address, while the router now reported 82.165.79.14. The update had reset the router's built-in dynamic DNS client, so it had stopped sending updates.

Re-entering the credentials in the router fixed the problem within a few minutes. To avoid a repeat, I also installed a small update client on the server itself, which checks the public address every five minutes and updates the record when it changes.

If you run into the same symptom, check three things in order: whether your domain resolves to your current public address, whether the forwarding rules still point to the right internal machine, and whether your provider has started placing you behind carrier-grade address translation, which makes incoming connections impossible without a tunnel.""",
        ["82.165.77.201", "82.165.79.14"],
    ),
    (
        "allotment-waiting-list",
        "https://www.hartley-allotments.org/notices/joining-the-waiting-list",
        """Joining the Allotment Waiting List

Demand for allotment plots in Hartley has grown steadily over the past few years, and there are currently around sixty names on our waiting list. We understand that waiting can be frustrating, so this notice explains how the list works and how you can improve your chances of getting a plot sooner.

Plots are offered strictly in the order in which applications were received. When a tenant gives up their plot, usually at the end of the growing season in October, the committee contacts the next person on the list. If you decline an offer, you keep your place, but after two refusals your name moves to the end.

Many newcomers find that a full plot is more work than they expected. For this reason we now divide some plots into halves and quarters, and accepting a smaller plot can shorten your wait considerably. Several of our most productive gardeners started with a quarter plot and took on more land once they knew how much time they could spare.

To join the list, send your name, address and telephone number to the lettings officer at lettings@hartley-allotments.org. Please tell us if you move house, because offers that cannot be delivered are passed to the next applicant. Visitors are welcome at our open day in June.""",
        ["lettings@hartley-allotments.org"],
    ),
    (
        "conference-call-for-papers",
        "https://www.coastal-heritage-conference.org/2025/call-for-papers",
        """Call for Papers: Coastal Heritage in a Changing Climate

We invite proposals for papers and posters for our annual conference, which will bring together archaeologists, historians, planners and community groups working to understand and protect heritage along the coast. Rising seas, stronger storms and eroding cliffs threaten sites ranging from prehistoric settlements to Victorian piers, and many will be lost within a generation.

We welcome contributions on recording sites before they disappear, on involving local volunteers in monitoring, and on difficult decisions about which places can be defended and which must be allowed to change. Papers describing projects that did not go as planned are especially welcome, since the sector learns as much from them as from successes.

Proposals should include a title, an abstract of no more than three hundred words and a short biography of each presenter. Presentations will last twenty minutes, followed by ten minutes of discussion. A limited number of bursaries are available to cover travel for students and community volunteers.

Please send proposals to the programme committee at papers@coastal-heritage-conference.org by the end of March. Questions about bursaries or accessibility can be addressed to our organiser, Dr Aisha Rahman, at a.rahman@seaside-university.ac.uk, who will reply within a week.""",
        ["papers@coastal-heritage-conference.org", "a.rahman@seaside-university.ac.uk"],
    ),
    (
        "mail-server-migration",
        "https://blog.smallbiz-it-support.com/2024/moving-our-mail-server",
        """Notes from Moving a Small Office Mail Server

This spring we moved the email for a twelve-person accounting office from an ageing server in a cupboard to a hosted service. The move went smoothly in the end, but a few details caught us out, and they may be useful for anyone planning something similar.

The old server sent mail directly from the office connection at 62.30.112.88, and over the years several partners had added that address to allow lists on their own systems. When outgoing mail started leaving from the new provider, two of those partners began quarantining our messages. We had to contact each of them and ask them to trust the new provider instead, which took more than a week.

We also lowered the time-to-live on the domain's mail records a few days before the switch. That meant that when we changed the records, the rest of the internet noticed the change within minutes rather than hours, and very little mail arrived at the old server after the cut-over.

Finally, archived messages took far longer to import than expected because the old mailboxes were so large. Starting the import a week early and synchronising the last few days on the night of the switch would have saved us a stressful weekend. Questions can go to support@smallbiz-it-support.com.""",
        ["62.30.112.88", "support@smallbiz-it-support.com"],
    ),
    (
        "lost-cat-notice",
        "https://www.greenhill-residents.org/noticeboard/found-a-tabby-cat",
        """Found: Friendly Tabby Cat near Greenhill Park

A friendly young tabby cat has been visiting several gardens on Orchard Close and the streets around Greenhill Park for the past ten days. She is small, with a white chin and white front paws, and she seems well fed and used to people, so we believe she belongs to someone nearby and may have wandered further than usual.

She is not wearing a collar. One of our neighbours took her to the veterinary surgery on the High Street, where staff scanned her for a microchip, but unfortunately the chip's details had not been updated and the registered phone number no longer works. The surgery has kept a record of the chip number.

For now she is sleeping in a shed belonging to a resident who is feeding her, and she is content, but she clearly misses her home. If you think she might be your cat, or you recognise her from the description, please get in touch with Sarah Lindqvist at sarah.lindqvist@outlook.com and include a photo if you can.

This is also a good reminder for all cat owners to check that microchip details are current. It takes only a few minutes, and it is the quickest way to be reunited if your pet goes missing.""",
        ["sarah.lindqvist@outlook.com"],
    ),
]

# --- Semantic duplicates: a paraphrased rewrite of a good article (different wording, same content).
# semantic_dedup should remove the rewrite; the original survives (the rewrites are shorter, blander
# reposts). (slug of the original, url, text) --------------------------------------------------------
PARAPHRASES: list[tuple[str, str, str]] = [
    (
        "sourdough-starter",
        "https://homebaking-tips.net/posts/sourdough-starter-care",
        """Sourdough Starter Care

A sourdough starter is just flour and water colonised by wild yeast and lactic acid bacteria. The yeast makes carbon dioxide, which makes the dough rise, and the bacteria make the acids responsible for the sour taste and the longer shelf life of the bread. Since both are alive, a starter needs regular feeding, a bit like a pet.

To feed a starter, most bakers throw away most of it and top up the remainder with equal weights of fresh flour and water, once or twice a day at room temperature. A healthy starter doubles within four to eight hours of being fed, smells sour and is full of bubbles.

Bakers who bake once a week can keep the starter in the fridge, where fermentation slows down and it can go a week or longer without food. Take it out the day before you bake and feed it twice so it is active again. Grey liquid on the top is only alcohol from hungry yeast, so pour it off, feed the starter and it will bounce back.""",
    ),
    (
        "how-tides-work",
        "https://seaside-facts.com/why-are-there-two-tides-a-day",
        """Why Are There Two Tides a Day?

Tides come mostly from the gravity of the Moon, and to a lesser extent from the Sun. The Moon pulls harder on the side of the Earth nearest to it than on the far side, so the ocean facing the Moon bulges towards it. A second bulge appears on the opposite side, where the Moon pulls the solid Earth away from the water. As the planet turns through both bulges each day, most coasts get two high tides and two low tides.

The Sun causes tides too, but they are less than half as strong because it is so far away. At new and full moon the Sun and Moon line up and produce big spring tides, while at the quarter moons they work against each other and produce small neap tides. The shape of the coast also matters a lot: funnel-shaped bays like the Bay of Fundy have enormous tides, and enclosed seas like the Mediterranean have very small ones.""",
    ),
    (
        "home-composting",
        "https://easy-garden-ideas.com/compost-made-simple",
        """Compost Made Simple

Compost is made when bacteria, fungi, worms and insects break down kitchen scraps and garden waste into dark, crumbly material that is great for soil. All you need to do is give them good conditions.

The most important thing is to mix greens and browns. Greens are wet and full of nitrogen, such as vegetable peelings, coffee grounds and fresh grass clippings. Browns are dry and full of carbon, such as dead leaves, shredded cardboard and straw. Too many greens make a slimy, smelly heap, and too many browns make a heap that hardly breaks down, so use about the same amount of each and mix them well.

Keep the heap about as damp as a wrung-out sponge and turn it with a fork every few weeks to let air in. Do not add meat, fish, dairy or cooked food, because they attract rats. If you start a heap in spring and look after it, you should have compost ready to use in the autumn.""",
    ),
    (
        "photosynthesis",
        "https://science-for-kids-and-parents.org/photosynthesis-explained",
        """Photosynthesis Explained

Plants, algae and some bacteria use photosynthesis to capture energy from sunlight and store it in sugar. Nearly every living thing depends on this process, and it also produces the oxygen we breathe.

It happens mostly in leaves, inside chloroplasts, which contain the green pigment chlorophyll. Chlorophyll absorbs red and blue light and reflects green light, which is why leaves look green.

There are two stages. First, in the light-dependent reactions, the energy absorbed by chlorophyll splits water, releasing oxygen and making the energy carriers ATP and NADPH. Then, in the Calvin cycle, the plant uses that energy to turn carbon dioxide from the air into sugar, with the help of an enzyme called rubisco, which may be the most common protein on Earth. Plants use the sugar to grow and to build cellulose for their cell walls.""",
    ),
    (
        "wind-turbines",
        "https://renewables-made-easy.com/wind-power-basics",
        """Wind Power Basics

A wind turbine has a tall tower with a nacelle on top and three blades fixed to a hub. Wind turns the blades, the blades turn the hub, and the hub drives a generator in the nacelle that makes electricity.

The blades behave like the wings of a plane. Their curved shape makes air move faster over one side, which creates a difference in pressure and therefore lift, and because the blades are attached to the hub, the lift spins them around. The blades are twisted because the tips travel much faster than the part near the hub.

Turbines start producing power in a light breeze, reach full power in strong wind and switch off in storms. Motors keep them pointed into the wind and adjust the pitch of the blades. The energy in wind grows with the cube of wind speed, which is why turbines are built so tall and why many wind farms are placed out at sea.""",
    ),
    (
        "history-of-tea",
        "https://tea-lovers-corner.com/where-did-tea-come-from",
        """Where Did Tea Come From?

Legend says tea was discovered about five thousand years ago when leaves blew into water being boiled for the Chinese emperor Shennong. By the third century it was definitely being drunk in south-west China, first as medicine and then for enjoyment.

Tea culture grew under the Tang dynasty, when Lu Yu wrote the Classic of Tea about growing and preparing it. Back then tea was pressed into bricks, ground and whisked with water, and monks took this method to Japan, where it became the tea ceremony.

Dutch and Portuguese traders brought tea to Europe in the early 1600s, and it became popular in England after Charles the Second married the Portuguese princess Catherine of Braganza. The East India Company's tea trade grew into a major political force. Later the British set up huge plantations in India and Sri Lanka, and today tea is the most popular drink in the world after water.""",
    ),
]
# --- Otherwise decent prose with profanity: c4_badwords. (slug, url, text) ----------------------------
BADWORD_PAGES: list[tuple[str, str, str]] = [
    (
        "rant-delayed-train",
        "https://www.commuter-voices.net/rants/another-cancelled-train",
        """Another Morning, Another Cancelled Train

I have been taking the same commuter train into the city for six years, and I have never known the service to be as bad as it has been this winter. This morning the 7.42 was cancelled again, with no explanation on the board and nobody on the platform who could tell us anything.

Honestly, what the fuck are we paying for? A season ticket costs more than my monthly food shopping, and in return I get overcrowded carriages, broken heating and a timetable that appears to be a work of fiction. Three times last week I arrived late for work, and my manager is running out of patience.

The company says the problems are caused by staff shortages and old trains waiting for repairs. That may be true, but passengers deserve honest information and a plan. Until then, I will keep writing to my local representative and collecting delay repay forms, for whatever good it does.""",
    ),
    (
        "review-terrible-plumber",
        "https://www.tradesperson-reviews.co.uk/reviews/plumbing/flowline-services",
        """One Star: Avoid This Plumbing Company

We booked this company to replace a leaking valve under our kitchen sink. The engineer arrived two hours late, did not apologise, and spent most of the visit on his phone. After forty minutes he announced that the job was finished and charged us for a full hour plus a call-out fee.

That evening the cupboard was full of water again. When I phoned the office, the receptionist told me that the engineer had done a great job and that the leak must be a new problem. What a load of shit. We had to call another plumber the next morning, who found that the new valve had simply not been tightened.

The second plumber was polite, explained exactly what had gone wrong and charged a fair price. I am writing this review so that other people do not waste their money the way we did. Read the reviews carefully and ask for a fixed quote before anyone starts work.""",
    ),
    (
        "gaming-forum-rage",
        "https://forums.pixelarena-gaming.com/threads/patch-notes-broke-my-build.88213",
        """The Latest Patch Completely Broke My Build

I have played this game almost every evening since launch and I have always defended the developers when other players complained. After this patch, I honestly do not know what they are thinking. My character was built around the fire damage bonus, which was reduced by half without any warning in the preview notes.

This is bullshit, plain and simple. Hundreds of hours of grinding for equipment are now worthless, and the only viable builds left all use the same two weapons. Every match in the ranked queue now looks identical, which makes the game far less interesting to watch and to play.

I understand that balance changes are necessary, and some abilities really were too strong. But large changes should be tested on the public test server first and explained properly. Until the developers respond, I am taking a break and playing something else with my friends.""",
    ),
    (
        "parenting-blog-honest",
        "https://www.tired-parents-diary.com/2024/03/the-week-everyone-got-sick",
        """The Week Everyone in the House Got Sick

It started with our youngest on Monday, who came home from nursery with a runny nose and a temperature. By Wednesday her brother had it, by Thursday my partner was in bed, and on Friday morning I woke up feeling as though I had been hit by a bus. Nobody warns you about weeks like this when you decide to have children.

There is a particular kind of exhaustion that comes from nursing sick children while being ill yourself. At three in the morning, cleaning up after a coughing toddler for the fourth time, I said damn it out loud and then felt guilty, as though the poor child had planned it. Everything is harder when nobody in the house has slept properly for days.

If you are in the middle of a week like this, I hope you know it does end. Lower your standards, order the takeaway, put the television on and accept every offer of help from friends and grandparents.""",
    ),
    (
        "restaurant-review-rude",
        "https://www.eatout-reviews.com/reviews/the-golden-anchor",
        """Disappointing Dinner at the Golden Anchor

We went to the Golden Anchor for my mother's seventieth birthday, having booked a table weeks in advance and mentioned the occasion on the booking. When we arrived, the table had been given away, and we waited forty minutes at the bar before being seated next to the kitchen door.

The food, when it finally came, was mediocre at best. The fish was dry, the chips were cold and the sauce on the steak tasted as if it came from a packet. When my brother politely pointed this out, the manager told him that if he did not like it he could piss off somewhere else. My mother was close to tears, and we left without ordering dessert.

I have eaten there several times over the years and it used to be a lovely place. Perhaps it has changed hands. Either way, I cannot recommend it to anyone planning a special meal.""",
    ),
    (
        "diy-disaster",
        "https://www.weekend-diy-stories.com/posts/how-not-to-hang-a-shelf",
        """How Not to Hang a Floating Shelf

I thought hanging a floating shelf in the living room would take half an hour. I had watched a couple of videos, bought a stud finder and a box of wall plugs, and felt fairly confident. Four hours later there were seven holes in the wall, a dent in the floorboards and no shelf.

The first problem was that the stud finder disagreed with itself every time I moved it. The second was that the wall turned out to be plasterboard with nothing solid behind it exactly where I wanted the shelf. When the third plug spun uselessly in its hole, I shouted shit so loudly that the neighbour knocked to check that everyone was all right.

In the end I bought proper cavity fixings, filled the extra holes, and moved the shelf thirty centimetres to the left, where there was a wooden stud. It is level now, and nobody would guess the afternoon it took.""",
    ),
]

# --- Pages from blocked URLs (adult sites: banned URL words, soft-banned words, banned sub-words): url_filter. (slug, url, text) -------------
BLOCKED_PAGES: list[tuple[str, str, str]] = [
    (
        "adult-members-area",
        "https://www.hot-xxx-videos-online.com/members/welcome",
        """Welcome to the members area. Your subscription is now active and gives you unlimited access to our complete library, updated every day with new content. Use the menu on the left to browse categories, save your favourites and manage your account settings. If you have any trouble logging in, please contact our support team and we will help you as quickly as possible. Remember that your membership renews automatically each month unless you cancel it from the billing page.""",
    ),
    (
        "adult-cams",
        "https://www.livesex-camgirl-shows.net/models/browse",
        """Browse hundreds of models online right now and start chatting in seconds. New members receive twenty free credits when they verify their account, and our premium plans unlock private shows and high definition streams. All models are verified adults and our site is protected with secure payment processing. Join today and discover why thousands of members visit our community every single day from all around the world.""",
    ),
    (
        "porn-tube",
        "https://pornhubvideos-free.xxx/trending/today",
        """Trending today on our site. The most popular uploads of the last twenty-four hours are listed below, sorted by views and ratings from our community. Create a free account to leave comments, build playlists and receive recommendations based on what you watch. Our uploaders are paid for every view, so if you enjoy a channel, subscribe to support it and be notified whenever new material is published.""",
    ),
    (
        "free-chat",
        "https://www.free-sex-chat-rooms.com/join",
        """Join thousands of members in our chat rooms, open around the clock. Registration takes less than a minute and only needs a nickname and a valid email address. Choose a room by topic or by region, send private messages to other members, and share photos in our members gallery. Premium membership removes all advertising and gives you priority access to our most popular rooms.""",
    ),
    (
        "nsfw-gallery",
        "https://nsfw-gallery-hub.com/latest",
        """The latest galleries from our contributors are shown below, with new sets added several times a day. Use the filters to sort by date, popularity or rating, and follow your favourite contributors to see their new uploads first. Members can download full resolution files, create private collections and comment on every gallery. Please confirm that you are over eighteen before continuing.""",
    ),
    (
        "milf-tube",
        "https://www.milf-and-babes-tube.com/categories",
        """All categories are listed in alphabetical order, with the number of videos in each one shown next to its name. New uploads are added every hour, and our editors pick the best of the week for the front page. Create an account to rate videos, save them to playlists and get recommendations. Our mobile site works on every phone and tablet without an app.""",
    ),
    (
        "hentai-stream",
        "https://hentai-stream-world.net/series/popular",
        """Popular series this month are listed below, updated daily from the views of our members. Every series page shows the number of episodes, the release year and the average rating. Members can continue watching from where they stopped on any device and receive a notification whenever a new episode of a series they follow is added to the site.""",
    ),
    (
        "adult-dating",
        "https://www.sexy-nude-singles-dating.com/signup",
        """Sign up in less than a minute and meet singles in your area tonight. Our matching system uses your preferences and location to suggest people who are looking for the same thing as you. Messaging is free for the first week, and upgrading unlocks unlimited chats, advanced search filters and the ability to see who has viewed your profile. Thousands of new members join every day, so there is always someone new to talk to.""",
    ),
    (
        "escort-directory",
        "https://escort-xxx-directory.com/london/listings",
        """Find verified companions in London with our updated directory. Every listing includes photographs, rates, availability and reviews from previous clients, so that you can choose with confidence. Profiles are checked by our moderators every week, and members can save their favourite listings and receive alerts when new companions join in their area. Booking is handled directly with each listing, and our support team is available around the clock.""",
    ),
]
# --- Non-English pages (natural text in other languages): language. (slug, lang, url, text) ---------
NON_ENGLISH: list[tuple[str, str, str, str]] = [
    (
        "de-fahrrad",
        "de",
        "https://www.radfahren-im-alltag.de/ratgeber/fahrrad-winterfest-machen",
        """Das Fahrrad winterfest machen

Wer auch im Winter mit dem Fahrrad zur Arbeit fährt, sollte sein Rad rechtzeitig auf die kalte Jahreszeit vorbereiten. Besonders wichtig ist eine gut funktionierende Beleuchtung, denn in den Wintermonaten ist es morgens und abends lange dunkel.

Die Reifen verdienen ebenfalls Aufmerksamkeit. Ein etwas geringerer Luftdruck verbessert den Halt auf nassem Laub und Schneematsch, und wer häufig auf vereisten Wegen unterwegs ist, kann über Spikereifen nachdenken. Die Kette sollte regelmäßig gereinigt und geölt werden, weil Streusalz die Metallteile sehr schnell angreift.

Nach einer Fahrt durch Schnee und Salz lohnt es sich, das Rad kurz mit klarem Wasser abzuspülen und trocken zu wischen. So bleibt es bis zum Frühling in gutem Zustand.""",
    ),
    (
        "fr-boulangerie",
        "fr",
        "https://www.patrimoine-gourmand.fr/articles/histoire-de-la-baguette",
        """Petite histoire de la baguette

La baguette est aujourd'hui le symbole du pain français, mais son histoire est plus récente qu'on ne le pense souvent. Les pains longs existaient déjà au dix-huitième siècle, pourtant la baguette telle que nous la connaissons ne s'est vraiment imposée qu'au début du vingtième siècle.

Une loi de 1920 interdisait aux boulangers de travailler avant quatre heures du matin. Un pain long et fin, qui cuit plus vite qu'une grosse miche, permettait de proposer du pain frais dès l'ouverture des boutiques. La baguette répondait parfaitement à cette contrainte.

Une bonne baguette se reconnaît à sa croûte dorée et croustillante, à sa mie alvéolée et à son parfum légèrement sucré. En 2022, le savoir-faire artisanal de la baguette a été inscrit au patrimoine culturel immatériel de l'humanité par l'Unesco.""",
    ),
    (
        "es-huerto",
        "es",
        "https://www.huertourbano.es/consejos/como-empezar-un-huerto-en-el-balcon",
        """Cómo empezar un huerto en el balcón

No hace falta tener un jardín para cultivar verduras en casa. Un balcón soleado, unas cuantas macetas y un poco de paciencia bastan para cosechar tomates, lechugas y hierbas aromáticas durante buena parte del año.

Lo primero es observar cuántas horas de sol recibe el balcón. La mayoría de las hortalizas de fruto, como los tomates y los pimientos, necesitan al menos seis horas de luz directa, mientras que las lechugas y las espinacas se conforman con menos. Es importante elegir macetas con buen drenaje y un sustrato ligero y rico en materia orgánica.

El riego es la tarea más delicada, porque las macetas se secan mucho más rápido que la tierra del suelo. En verano conviene regar a primera hora de la mañana o al atardecer, y comprobar siempre la humedad con el dedo antes de añadir agua.""",
    ),
    (
        "it-caffe",
        "it",
        "https://www.cultura-del-caffe.it/storie/il-rito-del-caffe-espresso",
        """Il rito del caffè espresso

In Italia il caffè non è soltanto una bevanda, ma un piccolo rito quotidiano. Al bancone del bar si ordina un espresso, lo si beve in pochi sorsi, si scambiano due parole con il barista e si riparte. Tutto dura pochi minuti, eppure questo gesto scandisce la giornata di milioni di persone.

La macchina per l'espresso fu perfezionata a Milano e a Torino tra la fine dell'Ottocento e la metà del Novecento. L'acqua calda passa attraverso il caffè macinato finemente ad alta pressione, e in circa venticinque secondi si ottiene una bevanda densa, con una crema color nocciola in superficie.

Esistono molte varianti: il caffè ristretto, più concentrato, il caffè lungo, il macchiato con un po' di latte e il cappuccino, che tradizionalmente si beve soltanto la mattina.""",
    ),
    (
        "pt-praia",
        "pt",
        "https://www.viagens-pelo-litoral.pt/roteiros/um-fim-de-semana-na-costa-alentejana",
        """Um fim de semana na costa alentejana

A costa alentejana é um dos segredos mais bem guardados de Portugal. Ao contrário do Algarve, aqui as praias são amplas e tranquilas, rodeadas de falésias e de pequenas aldeias onde o tempo parece correr mais devagar.

Vila Nova de Milfontes é um bom ponto de partida. A vila fica junto à foz do rio Mira e oferece praias de rio, ideais para famílias, e praias de mar, onde as ondas atraem surfistas de todo o país. Ao fim da tarde, vale a pena caminhar até ao farol e ver o pôr do sol sobre o oceano.

Para quem gosta de caminhar, a Rota Vicentina percorre toda a costa em trilhos bem sinalizados. Depois de um dia de passeio, nada melhor do que jantar peixe grelhado numa tasca local.""",
    ),
    (
        "nl-fiets",
        "nl",
        "https://www.wonen-in-utrecht.nl/stad/waarom-iedereen-hier-fietst",
        """Waarom iedereen in Utrecht fietst

Wie voor het eerst in Utrecht aankomt, valt meteen op hoeveel mensen er fietsen. Studenten, ouders met kinderen voorin een bakfiets en ouderen op een elektrische fiets delen samen de brede fietspaden die door de hele stad lopen.

Dat is geen toeval. De gemeente heeft de afgelopen decennia veel geïnvesteerd in goede verbindingen voor fietsers en in veilige kruispunten. Bij het centraal station ligt de grootste fietsenstalling ter wereld, met plaats voor ruim twaalfduizend fietsen.

Fietsen is in Utrecht vaak simpelweg de snelste manier om je te verplaatsen. De afstanden zijn kort, het landschap is vlak en met de auto sta je al snel in de file of zoek je lang naar een parkeerplaats.""",
    ),
    (
        "sv-allemansratt",
        "sv",
        "https://www.friluftsliv-i-sverige.se/guider/allemansratten-forklarad",
        """Allemansrätten förklarad

I Sverige har alla rätt att röra sig fritt i naturen, även på mark som någon annan äger. Denna rätt kallas allemansrätten och är en viktig del av svensk kultur. Den gör det möjligt att vandra, cykla, plocka bär och svamp och till och med tälta en natt på de flesta platser.

Med rättigheterna följer också skyldigheter. Man får inte störa eller förstöra, och man ska hålla ett respektfullt avstånd till bostadshus. Det är inte tillåtet att elda när det råder eldningsförbud, och man ska alltid ta med sig sitt skräp.

En enkel tumregel är att lämna platsen i samma skick som när man kom dit, så att nästa besökare kan njuta av naturen lika mycket.""",
    ),
    (
        "pl-pierogi",
        "pl",
        "https://www.kuchnia-babci.pl/przepisy/pierogi-ruskie-krok-po-kroku",
        """Pierogi ruskie krok po kroku

Pierogi ruskie to jedno z najbardziej lubianych dań kuchni polskiej. Farsz przygotowuje się z ugotowanych ziemniaków, twarogu i cebuli zeszklonej na maśle, doprawionych solą i dużą ilością pieprzu.

Ciasto robi się z mąki, ciepłej wody, szczypty soli i odrobiny oleju. Należy je dobrze wyrobić, aż będzie gładkie i elastyczne, a następnie cienko rozwałkować i wycinać szklanką krążki. Na każdy krążek nakłada się łyżeczkę farszu i starannie skleja brzegi.

Pierogi gotuje się partiami w osolonej wodzie, aż wypłyną na powierzchnię, a potem jeszcze około dwóch minut. Najlepiej smakują podane z podsmażoną cebulką i kwaśną śmietaną.""",
    ),
    (
        "ru-baikal",
        "ru",
        "https://www.puteshestviya-po-rossii.ru/mesta/ozero-baikal-zimoy",
        """Озеро Байкал зимой

Байкал — самое глубокое озеро на планете, и зимой оно становится особенно красивым. В январе поверхность озера покрывается толстым прозрачным льдом, сквозь который можно разглядеть камни на дне и пузырьки воздуха, застывшие в глубине.

Многие путешественники приезжают на Байкал именно ради льда. По нему катаются на коньках, ездят на велосипедах и даже на автомобилях по специально проложенным дорогам. Однако лед бывает коварным, поэтому выходить на него лучше с опытным местным гидом.

Не стоит забывать и о морозах: температура нередко опускается ниже минус двадцати градусов, а ветер над открытым льдом очень сильный. Теплая одежда в несколько слоев просто необходима.""",
    ),
    (
        "zh-tea",
        "zh",
        "https://www.chawenhua.cn/zhishi/ruhe-paochu-yibei-hao-lvcha",
        """如何泡出一杯好绿茶

绿茶是中国最古老、产量最大的茶类之一，以清香和鲜爽的口感著称。想要泡出一杯好绿茶，首先要注意水温。绿茶的叶子比较嫩，如果用刚烧开的沸水冲泡，容易把茶叶烫熟，使茶汤变得苦涩。一般来说，八十度左右的水最为合适。

其次是茶叶的用量。通常一百五十毫升的水配三克左右的茶叶就足够了。冲泡时可以先倒入少量热水，让茶叶慢慢舒展，再把杯子注满。

最后要注意浸泡的时间。第一泡大约一分钟即可饮用，以后每一泡可以适当延长时间。好的绿茶一般可以冲泡三次左右，每一次都会带来不同的香气和滋味。""",
    ),
    (
        "ja-sakura",
        "ja",
        "https://www.nihon-no-kisetsu.jp/haru/ohanami-no-tanoshimikata",
        """お花見の楽しみ方

日本の春といえば、やはり桜です。三月の終わりから四月の初めにかけて、全国の公園や川沿いで桜が一斉に咲き、多くの人がお花見に出かけます。家族や友人、会社の同僚と一緒に桜の木の下にシートを広げ、お弁当を食べたりお茶を飲んだりしながら、春の訪れを祝います。

人気のある公園では、朝早くから場所取りをする人の姿も見られます。夜になると、ライトアップされた夜桜を楽しむこともできます。昼間とはまったく違う、幻想的な雰囲気を味わえるでしょう。

お花見をするときは、ごみを必ず持ち帰り、桜の枝を折らないように気をつけることが大切です。""",
    ),
    (
        "ar-coffee",
        "ar",
        "https://www.thaqafat-alqahwa.com/maqalat/alqahwa-alarabiya",
        """القهوة العربية وتقاليد الضيافة

تعد القهوة العربية رمزاً أساسياً من رموز الكرم والضيافة في شبه الجزيرة العربية. فعندما يصل الضيف إلى البيت، يبادر صاحب المنزل إلى تقديم القهوة له قبل أي شيء آخر، تعبيراً عن الترحيب والاحترام.

تحضر القهوة العربية من حبوب البن المحمصة تحميصاً خفيفاً، وتضاف إليها الهيل وأحياناً الزعفران أو القرنفل، ثم تغلى في دلة نحاسية تقليدية. وتقدم في فناجين صغيرة بلا مقابض، ويصب المضيف كمية قليلة في كل مرة.

ومن آداب تقديم القهوة أن يمسك المضيف الدلة بيده اليسرى والفناجين بيده اليمنى، وأن يبدأ بالضيف الأكبر سناً أو الأعلى مكانة. وإذا اكتفى الضيف، هز الفنجان بلطف إشارة إلى أنه لا يريد المزيد.""",
    ),
    (
        "tr-istanbul",
        "tr",
        "https://www.gezi-notlari.com.tr/sehirler/istanbulda-bir-gun",
        """İstanbul'da bir gün

İstanbul, iki kıtaya yayılan ve binlerce yıllık tarihi olan eşsiz bir şehirdir. Bir günde şehrin tamamını görmek imkânsız olsa da iyi planlanmış bir rota ile pek çok güzelliği keşfetmek mümkündür.

Güne Sultanahmet'te başlamak iyi bir fikirdir. Ayasofya, Sultanahmet Camii ve Yerebatan Sarnıcı birbirine yürüme mesafesindedir. Öğle yemeğinden sonra Kapalıçarşı'nın dar sokaklarında dolaşabilir, ardından Mısır Çarşısı'nda baharat kokuları arasında kaybolabilirsiniz.

Akşamüstü Eminönü'nden kalkan bir vapura binerek Boğaz'da kısa bir tur yapmak, günün en unutulmaz anlarından biri olacaktır. Gün batımında martıların eşliğinde çay içmek İstanbul'un tadını çıkarmanın en güzel yoludur.""",
    ),
    (
        "fi-sauna",
        "fi",
        "https://www.suomalainen-elama.fi/perinteet/saunominen",
        """Saunominen on suomalaisille tärkeä perinne

Suomessa on arviolta yli kolme miljoonaa saunaa, eli lähes yksi jokaista kotitaloutta kohden. Sauna löytyy omakotitaloista, kerrostaloista, mökeiltä ja jopa eduskuntatalosta. Monille suomalaisille saunominen on viikoittainen rentoutumisen hetki.

Perinteisessä saunassa kiuasta lämmitetään puilla, ja löylyä heitetään kuumille kiville kauhalla. Lämpötila on yleensä kahdeksankymmenen ja sadan asteen välillä. Kesällä mökillä saunan jälkeen pulahdetaan järveen, ja talvella rohkeimmat kierivät lumessa.

Saunassa ei ole kiire. Siellä istutaan, jutellaan ja rauhoitutaan, ja vanhan sanonnan mukaan saunassa ollaan kuin kirkossa.""",
    ),
    (
        "cs-praha",
        "cs",
        "https://www.cestovani-po-cesku.cz/tipy/prazske-mosty",
        """Pražské mosty a jejich příběhy

Prahou protéká řeka Vltava a spojuje ji celkem osmnáct mostů. Nejznámější z nich je Karlův most, jehož stavba začala v roce 1357 za vlády císaře Karla IV. Most je zdobený třiceti sochami světců a každý den po něm projdou tisíce turistů.

Méně známé, ale neméně zajímavé jsou i další mosty. Z Mánesova mostu je krásný výhled na Pražský hrad a z Legií se dá sejít na Střelecký ostrov, kde místní lidé v létě odpočívají na trávě u vody.

Nejlepší čas na procházku po mostech je brzy ráno, kdy je ve městě ještě klid a nad řekou se často drží jemná mlha.""",
    ),
    (
        "ko-kimchi",
        "ko",
        "https://www.hanguk-eumsik.kr/munhwa/gimjang-munhwa",
        """김장 문화 이야기

김장은 겨울을 앞두고 많은 양의 김치를 한꺼번에 담그는 한국의 전통 풍습입니다. 보통 십일월 말부터 십이월 초 사이에 가족과 이웃이 함께 모여 배추를 절이고 양념을 만들어 김치를 담급니다.

김장을 하는 날에는 온 가족이 역할을 나누어 일합니다. 어른들은 양념을 만들고, 아이들은 배추를 나르거나 재료를 정리하며 일손을 돕습니다. 일이 끝나면 갓 담근 김치와 삶은 돼지고기를 함께 나누어 먹는 것이 큰 즐거움입니다.

김장 문화는 서로 돕고 나누는 공동체 정신을 보여 주는 전통으로 인정받아 유네스코 인류무형문화유산에 등재되었습니다.""",
    ),
    (
        "de-wandern",
        "de",
        "https://www.alpenwege.at/tipps/sicher-wandern-in-den-bergen",
        """Sicher wandern in den Bergen

Eine Bergwanderung beginnt nicht am Parkplatz, sondern schon zu Hause mit einer guten Planung. Wer die Länge der Strecke, die Höhenmeter und den Wetterbericht kennt, kann besser einschätzen, ob die Tour zu den eigenen Fähigkeiten passt.

Zur Grundausrüstung gehören feste Schuhe mit gutem Profil, Regenschutz, warme Kleidung, ausreichend Wasser und eine kleine Apotheke. Auch im Sommer kann es auf dem Gipfel empfindlich kalt werden, und Gewitter ziehen am Nachmittag oft sehr schnell auf.

Man sollte früh aufbrechen, regelmäßig Pausen einlegen und rechtzeitig umkehren, wenn das Wetter schlechter wird oder die Kräfte nachlassen. Der Gipfel läuft nicht davon.""",
    ),
    (
        "fr-velo",
        "fr",
        "https://www.mobilite-douce.fr/conseils/aller-au-travail-a-velo",
        """Aller au travail à vélo : nos conseils

De plus en plus de salariés choisissent le vélo pour se rendre au travail. C'est bon pour la santé, économique et souvent plus rapide que la voiture en ville, surtout aux heures de pointe.

Avant de se lancer, il est utile de repérer un itinéraire agréable, en privilégiant les pistes cyclables et les rues calmes, même si le trajet est un peu plus long. Un test un week-end permet d'estimer le temps nécessaire sans la pression de l'horaire.

Côté équipement, un bon éclairage, un antivol solide et des vêtements adaptés à la pluie font toute la différence. Beaucoup d'entreprises proposent désormais un local à vélos et des douches, et certaines participent même aux frais grâce au forfait mobilités durables.""",
    ),
    (
        "es-ciencia",
        "es",
        "https://www.divulgacion-cientifica.es/articulos/por-que-el-cielo-es-azul",
        """¿Por qué el cielo es azul?

La luz del sol parece blanca, pero en realidad está formada por todos los colores del arcoíris. Cuando atraviesa la atmósfera, choca con las moléculas de nitrógeno y oxígeno del aire, que la dispersan en todas direcciones.

Este fenómeno, conocido como dispersión de Rayleigh, afecta mucho más a la luz de longitud de onda corta, como el azul y el violeta, que a la luz roja o amarilla. Por eso, miremos hacia donde miremos, nos llega luz azul dispersada desde todas partes del cielo.

Al atardecer, la luz del sol debe recorrer un camino mucho más largo a través de la atmósfera. La mayor parte del azul se dispersa antes de llegar a nuestros ojos, y el cielo se tiñe de tonos naranjas y rojos.""",
    ),
    (
        "it-montagna",
        "it",
        "https://www.rifugi-e-sentieri.it/guide/una-notte-in-rifugio",
        """Una notte in rifugio

Dormire in un rifugio alpino è un'esperienza che ogni appassionato di montagna dovrebbe provare almeno una volta. Dopo una lunga salita, si arriva stanchi ma soddisfatti, si lasciano gli scarponi all'ingresso e ci si siede a un lungo tavolo di legno insieme ad altri escursionisti.

La cena è semplice ma abbondante: minestra, polenta, formaggi locali e spesso una fetta di torta fatta in casa. Si va a letto presto, perché la mattina la sveglia suona prima dell'alba per partire con il fresco.

È importante prenotare con anticipo, soprattutto in agosto, portare il sacco lenzuolo e rispettare gli orari e il silenzio notturno.""",
    ),
]
NON_ENGLISH += [
    (
        "da-cykel",
        "da",
        "https://www.hverdagsliv-i-koebenhavn.dk/artikler/cyklen-i-byen",
        """Cyklen er hverdagens transportmiddel i København

I København tager flere mennesker cyklen på arbejde end bilen. Byen har bygget brede cykelstier, grønne bølger ved lyskrydsene og særlige broer kun for cyklister og fodgængere, så det er både hurtigt og trygt at komme rundt.

Mange familier bruger ladcykler til at hente børn i børnehaven og til at handle ind. Om vinteren rydder kommunen cykelstierne for sne, før vejene bliver ryddet, fordi så mange er afhængige af cyklen hver dag.

For turister er det let at leje en cykel, men det er vigtigt at kende reglerne. Man skal række hånden op, før man stopper, og holde til højre, så de hurtige cyklister kan komme forbi.""",
    ),
    (
        "hu-balaton",
        "hu",
        "https://www.utazas-magyarorszagon.hu/uticelok/nyar-a-balatonnal",
        """Nyár a Balatonnál

A Balaton Közép-Európa legnagyobb tava, és a magyar családok kedvenc nyaralóhelye. Júliusban és augusztusban a partmenti települések megtelnek fürdőzőkkel, vitorlásokkal és fesztiválozókkal, esténként pedig a strandokon lángos és hideg limonádé illata száll.

A déli part vize sekély és gyorsan felmelegszik, ezért kisgyerekes családok számára ideális. Az északi parton mélyebb a víz, a tájat pedig vulkanikus tanúhegyek és szőlőültetvények teszik különlegessé. Érdemes kerékpárral körbejárni a tavat, hiszen jól kiépített bicikliút vezet körülötte.

Aki a tömeget kerülné, látogasson el a Balatonra ősszel, amikor a szüreti mulatságok idején a tó csendes és mégis nagyon hangulatos.""",
    ),
    (
        "el-elia",
        "el",
        "https://www.elliniki-kouzina.gr/arthra/to-elaiolado-stin-kouzina",
        """Το ελαιόλαδο στην ελληνική κουζίνα

Το ελαιόλαδο βρίσκεται στην καρδιά της ελληνικής κουζίνας εδώ και χιλιάδες χρόνια. Οι ελιές καλλιεργούνται σε όλη τη χώρα, από την Κρήτη μέχρι τη Χαλκιδική, και πολλές οικογένειες έχουν ακόμη τα δικά τους ελαιόδεντρα.

Η συγκομιδή γίνεται συνήθως από τον Νοέμβριο έως τον Ιανουάριο. Οι καρποί μεταφέρονται γρήγορα στο ελαιοτριβείο, όπου αλέθονται και πιέζονται, ώστε το λάδι να διατηρήσει το άρωμα και τη γεύση του.

Στο ελληνικό τραπέζι το ελαιόλαδο χρησιμοποιείται σχεδόν παντού: στις σαλάτες, στα λαδερά φαγητά, στα ψητά και ακόμη και στα γλυκά. Πολλοί πιστεύουν ότι αποτελεί ένα από τα μυστικά της μακροζωίας.""",
    ),
    (
        "vi-pho",
        "vi",
        "https://www.amthuc-viet.vn/bai-viet/cach-nau-pho-bo-tai-nha",
        """Cách nấu phở bò tại nhà

Phở là món ăn nổi tiếng nhất của Việt Nam và được yêu thích ở khắp nơi trên thế giới. Một bát phở ngon phụ thuộc phần lớn vào nước dùng, vì vậy người nấu cần kiên nhẫn và chuẩn bị từ sớm.

Xương bò được chần qua nước sôi để loại bỏ tạp chất, sau đó ninh nhỏ lửa trong nhiều giờ. Gừng và hành tím được nướng thơm rồi cho vào nồi cùng hoa hồi, quế, thảo quả và đinh hương. Nước dùng phải trong, ngọt tự nhiên và có mùi thơm nhẹ của các loại gia vị.

Khi ăn, bánh phở được trụng qua nước nóng, xếp vào bát cùng thịt bò thái mỏng, rồi chan nước dùng thật sôi lên trên. Có thể thêm rau thơm, giá đỗ, chanh và ớt tùy theo khẩu vị.""",
    ),
]

# --- Very short pages (a sentence or two of clear English, far below 50 words): gopher_quality. ------
SHORT_PAGES: list[tuple[str, str, str]] = [
    (
        "404",
        "https://www.northgate-dental.co.uk/old-page",
        "Page not found. Sorry, the page you are looking for has been moved or removed. Please check the address for mistakes, or use the search box at the top of the screen to find what you need.",
    ),
    (
        "subscribed",
        "https://www.weeklyrecipes-club.com/newsletter/thanks",
        "Thank you for subscribing to our weekly newsletter! You will receive a confirmation message within a few minutes. Please click the link in that message to confirm your subscription and start receiving our recipes.",
    ),
    (
        "out-of-stock",
        "https://shop.kettle-and-co.com/products/copper-kettle-1-7l",
        "Sorry, this item is currently out of stock. Enter your phone number below and we will send you a short text message as soon as new stock arrives, usually within three weeks.",
    ),
    (
        "maintenance",
        "https://portal.riverside-housing.org/",
        "We are carrying out scheduled maintenance on our online services tonight. Rent payments and repair requests will be unavailable until about midnight. In an emergency, please telephone our repairs team, who are available around the clock.",
    ),
    (
        "closed-thread",
        "https://forums.aquarium-keepers.net/threads/new-tank-cycling.4412",
        "This thread has been closed by a moderator because nobody has replied to it for more than two years. If you have a similar question, please start a fresh thread in the beginners section.",
    ),
    (
        "login-required",
        "https://members.citygym-network.com/classes/booking",
        "You must be signed in to book a place on a class. Please log in with your membership number and password. If you have forgotten your password, ask a member of staff at reception for help.",
    ),
    (
        "event-cancelled",
        "https://www.oakfield-village-hall.org/events/quiz-night",
        "Unfortunately the quiz night planned for this Friday has been cancelled because our quizmaster is unwell. Everyone who bought a ticket will receive a refund. We hope to announce a new date very soon, so keep an eye on the noticeboard.",
    ),
    (
        "order-confirmed",
        "https://www.bookshelf-direct.com/checkout/complete",
        "Thank you, your order has been placed successfully and payment has been taken. We will send you another message when your parcel leaves our warehouse, usually within two working days.",
    ),
    (
        "video-unavailable",
        "https://www.cookalong-tv.com/episodes/season-3/episode-7",
        "This video is not available in your country. The rights holder has restricted this episode to certain regions. You can still read the full recipe and the shopping list on the page for this episode.",
    ),
    (
        "search-empty",
        "https://www.localjobs-board.com/search?q=marine+biologist",
        "Your search did not match any current vacancies within ten miles of your postcode. Try using fewer keywords, or create a free alert so that we can email you when a matching job is advertised.",
    ),
    (
        "caption",
        "https://www.citynews-photos.com/gallery/marathon-2024/photo-18",
        "Runners cross the finish line on a bright, cold morning as crowds cheer along the final stretch of the city marathon. More than twelve thousand people took part this year, many raising money for charity.",
    ),
    (
        "session-expired",
        "https://online.northbank-savings.com/account/overview",
        "Your online banking session has expired because you were inactive for more than ten minutes. For your security, we have signed you out. Please log in again to continue, using your customer number and the password you chose when you registered.",
    ),
    (
        "comment-pending",
        "https://www.gardeners-notebook.com/posts/pruning-roses#comments",
        "Thank you for your comment on this post about pruning roses. To keep the discussion friendly, every comment is read by one of our moderators and will appear on the page once it has been approved.",
    ),
    (
        "coming-soon",
        "https://www.harbourview-bistro.com/",
        "Our new website is coming soon, with menus, photographs and online booking. In the meantime you can still reserve a table by calling the restaurant during opening hours, or simply drop in and ask for a table.",
    ),
]

# --- Spam and SEO pages: keyword stuffing, repeated lines and paragraphs: gopher_repetition. --------
SPAM_LINES = [
    (
        "replica-watches",
        "https://www.best-replica-watches-cheap.com/",
        "Buy cheap replica watches online at the best price with free shipping today",
    ),
    (
        "payday-loans",
        "https://www.instant-payday-loans-now.biz/apply",
        "Fast payday loans approved in minutes with no credit check required apply now",
    ),
    (
        "weight-loss",
        "https://www.miracle-slim-pills.net/order",
        "Lose ten kilos in one week with our miracle diet pills guaranteed results order today",
    ),
    (
        "seo-services",
        "https://www.rank-first-seo-agency.com/",
        "Number one SEO agency get your website to the top of search results guaranteed",
    ),
]

KEYWORD_STUFFED: list[tuple[str, str, str]] = [
    (
        "cheap-flights",
        "https://www.cheap-flights-cheap-hotels-deals.com/paris",
        """Cheap flights to Paris. Cheap flights to Paris from London, cheap flights to Paris from Manchester, cheap flights to Paris from Dublin. Looking for cheap flights to Paris? Our cheap flights to Paris are the best cheap flights to Paris because we compare cheap flights to Paris from every airline. Book cheap flights to Paris today and save on cheap flights to Paris with our cheap flights to Paris deals. Cheap flights to Paris in summer, cheap flights to Paris in winter, last minute cheap flights to Paris and cheap flights to Paris for families. Find cheap flights to Paris now.""",
    ),
    (
        "plumber-near-me",
        "https://www.plumber-near-me-emergency-plumber.com/",
        """Plumber near me. Need a plumber near me? Our plumber near me service is the best plumber near me in your area. Emergency plumber near me, cheap plumber near me, local plumber near me and 24 hour plumber near me. Call the plumber near me today because the plumber near me is always available. When you search for a plumber near me you want the plumber near me that arrives fast, so choose our plumber near me for every plumber near me job. Best plumber near me, trusted plumber near me, plumber near me.""",
    ),
    (
        "essay-writing",
        "https://www.best-essay-writing-service-online.net/",
        """Essay writing service. The best essay writing service online is our essay writing service because our essay writing service writes every essay. Cheap essay writing service, fast essay writing service, professional essay writing service and reliable essay writing service for students. Order from the essay writing service today and get the essay writing service discount on the essay writing service. Our essay writing service is the number one essay writing service, so trust the essay writing service that students trust. Essay writing service online now.""",
    ),
    (
        "crypto-signals",
        "https://www.crypto-profit-signals-vip.io/join",
        """Crypto trading signals. Join our crypto trading signals group for the best crypto trading signals and free crypto trading signals every day. Our crypto trading signals are accurate crypto trading signals from expert crypto trading signals analysts. Get crypto trading signals on your phone, crypto trading signals for bitcoin, crypto trading signals for altcoins and VIP crypto trading signals. The best crypto trading signals group has the best crypto trading signals, so join the crypto trading signals group now for crypto trading signals.""",
    ),
    (
        "used-cars",
        "https://www.used-cars-for-sale-cheap-used-cars.com/",
        """Used cars for sale. Cheap used cars for sale near you, used cars for sale by owner, used cars for sale under five thousand and used cars for sale with finance. Browse used cars for sale today because our used cars for sale are the best used cars for sale. Find used cars for sale in your city and compare used cars for sale prices. Used cars for sale, used cars for sale, used cars for sale. Buy used cars for sale online from the used cars for sale experts and save on used cars for sale.""",
    ),
    (
        "hotel-deals",
        "https://www.hotel-deals-best-hotel-deals.net/rome",
        """Hotel deals in Rome. The best hotel deals in Rome are here with our hotel deals in Rome search. Cheap hotel deals in Rome, luxury hotel deals in Rome, last minute hotel deals in Rome and family hotel deals in Rome. Compare hotel deals in Rome from every site and book hotel deals in Rome today. Our hotel deals in Rome are better than other hotel deals in Rome because we find hotel deals in Rome first. Hotel deals in Rome, hotel deals in Rome, book hotel deals in Rome now.""",
    ),
]

REPEATED_PARAGRAPH: list[tuple[str, str, str]] = [
    (
        "repeated-promo",
        "https://www.summer-sale-megastore.com/offers",
        """Summer sale now on! Everything in the store is reduced by up to seventy percent for one week only, with free delivery on every order and easy returns within thirty days. Do not miss out on the biggest sale of the year.""",
    ),
    (
        "repeated-casino-free",
        "https://www.win-big-prize-draw.com/enter",
        """Congratulations, you have been selected to enter our exclusive prize draw! Complete the short survey below to claim your chance to win a brand new phone, a luxury holiday or a cash prize of one thousand pounds.""",
    ),
]

# --- Navigation-only pages: menus, cookie banners, "javascript" lines, footers, and almost no prose.
# c4_quality drops the menu, policy and javascript lines and then finds too few sentences. ----------
COOKIE_BANNERS = [
    "We use cookies to give you the best possible experience on our website. By continuing to browse, you agree to our use of cookies as described in our cookie policy.",
    "This website uses cookies to improve your experience and to show you relevant offers. You can change your preferences at any time by visiting our cookie policy page.",
    "Our partners and we use cookies and similar technologies to personalise content and analyse traffic. Please read our privacy policy to learn more about how we use cookies.",
]
JAVASCRIPT_LINES = [
    "JavaScript seems to be disabled in your browser. You must have JavaScript enabled in your browser to use the full functionality of this website.",
    "Please enable JavaScript in your browser settings to view this page correctly and to use all of its features.",
    "For the best experience on our site, be sure to turn on JavaScript in your browser and reload the page.",
]
FOOTERS = [
    "© 2024 All content on this site is protected. Read our privacy policy and terms of use.",
    "Copyright notice and terms of use apply to every page. See the privacy policy for details.",
]
NAV_PAGES: list[tuple[str, str, list[str]]] = [
    (
        "outdoor-shop",
        "https://www.riverside-outdoor.com/",
        [
            "Riverside Outdoor",
            "Home",
            "Tents",
            "Sleeping Bags",
            "Backpacks",
            "Footwear",
            "Clothing",
            "Sale",
            "Brands",
            "Blog",
            "About",
            "Contact",
            "Sign in",
            "Basket",
            "Wishlist",
            "Stores",
            "Delivery",
            "Returns",
            "Gift cards",
            "Careers",
            "Sitemap",
            "Facebook",
            "Instagram",
            "YouTube",
            "Newsletter",
        ],
    ),
    (
        "news-portal",
        "https://www.dailyharbour-news.com/",
        [
            "Daily Harbour",
            "News",
            "Politics",
            "Business",
            "Sport",
            "Football",
            "Cricket",
            "Tennis",
            "Culture",
            "Film",
            "Music",
            "Books",
            "Travel",
            "Weather",
            "Opinion",
            "Obituaries",
            "Puzzles",
            "Crosswords",
            "Podcasts",
            "Video",
            "Subscribe",
            "Login",
            "Register",
            "Archive",
            "Contact",
        ],
    ),
    (
        "recipe-site",
        "https://www.supper-club-recipes.com/",
        [
            "Supper Club",
            "Recipes",
            "Breakfast",
            "Lunch",
            "Dinner",
            "Desserts",
            "Baking",
            "Vegetarian",
            "Vegan",
            "Quick meals",
            "Slow cooker",
            "Budget",
            "Seasonal",
            "Christmas",
            "Easter",
            "Cuisines",
            "Italian",
            "Indian",
            "Mexican",
            "Chinese",
            "Techniques",
            "Videos",
            "Shop",
            "Search",
            "Account",
        ],
    ),
    (
        "bank-home",
        "https://www.northbank-savings.com/",
        [
            "Northbank Savings",
            "Personal",
            "Business",
            "Accounts",
            "Savings",
            "Mortgages",
            "Loans",
            "Cards",
            "Insurance",
            "Investments",
            "Pensions",
            "Help",
            "Support",
            "Security",
            "Branches",
            "Accessibility",
            "Careers",
            "Investors",
            "Media",
            "Log on",
            "Register",
            "Apps",
            "Rates",
            "Calculators",
            "Contact",
        ],
    ),
    (
        "university",
        "https://www.eastmoor-university.ac.uk/",
        [
            "Eastmoor University",
            "Study",
            "Undergraduate",
            "Postgraduate",
            "Research",
            "International",
            "Courses",
            "Apply",
            "Open days",
            "Fees",
            "Funding",
            "Accommodation",
            "Campus",
            "Library",
            "Sport",
            "Alumni",
            "Staff",
            "Students",
            "News",
            "Events",
            "Jobs",
            "Contact",
            "Maps",
            "Giving",
            "Search",
        ],
    ),
    (
        "hotel-booking",
        "https://www.stayaway-hotels.com/",
        [
            "Stayaway Hotels",
            "Hotels",
            "Apartments",
            "Flights",
            "Car hire",
            "Deals",
            "Destinations",
            "Europe",
            "Asia",
            "Americas",
            "Africa",
            "Oceania",
            "Weekend",
            "Family",
            "Luxury",
            "Business",
            "Rewards",
            "Sign in",
            "Register",
            "Help",
            "Currency",
            "Language",
            "Partners",
            "Careers",
            "Press",
        ],
    ),
    (
        "software-docs",
        "https://docs.quarry-framework.dev/",
        [
            "Quarry",
            "Docs",
            "Guides",
            "Tutorials",
            "Reference",
            "API",
            "Examples",
            "Changelog",
            "Releases",
            "Downloads",
            "Install",
            "Configure",
            "Deploy",
            "Plugins",
            "Themes",
            "Community",
            "Forum",
            "Chat",
            "Blog",
            "Sponsors",
            "Security",
            "License",
            "GitHub",
            "Status",
            "Search",
        ],
    ),
    (
        "council-portal",
        "https://www.westbury-council.gov.uk/",
        [
            "Westbury Council",
            "Bins",
            "Recycling",
            "Council tax",
            "Parking",
            "Planning",
            "Housing",
            "Schools",
            "Libraries",
            "Leisure",
            "Roads",
            "Licences",
            "Benefits",
            "Births",
            "Deaths",
            "Marriages",
            "Elections",
            "Jobs",
            "Consultations",
            "Report",
            "Pay",
            "Apply",
            "Contact",
            "Accessibility",
            "Search",
        ],
    ),
    (
        "restaurant",
        "https://www.harbourview-bistro.com/menu",
        [
            "Harbourview Bistro",
            "Home",
            "Menu",
            "Starters",
            "Mains",
            "Desserts",
            "Wine",
            "Cocktails",
            "Lunch",
            "Dinner",
            "Brunch",
            "Private dining",
            "Events",
            "Gallery",
            "Reviews",
            "Vouchers",
            "Book",
            "Find us",
            "Parking",
            "Opening times",
            "Contact",
            "Instagram",
            "Facebook",
            "TripAdvisor",
            "Careers",
        ],
    ),
    (
        "forum-index",
        "https://forums.aquarium-keepers.net/",
        [
            "Aquarium Keepers",
            "Forums",
            "Freshwater",
            "Marine",
            "Reef",
            "Plants",
            "Shrimp",
            "Ponds",
            "Equipment",
            "Filters",
            "Lighting",
            "Breeding",
            "Diseases",
            "Classifieds",
            "Gallery",
            "Members",
            "Rules",
            "Login",
            "Register",
            "Search",
            "Unread",
            "Latest",
            "Calendar",
            "Help",
            "Staff",
        ],
    ),
    (
        "fashion-store",
        "https://www.linen-and-loom.com/women",
        [
            "Linen and Loom",
            "Women",
            "Men",
            "Kids",
            "Dresses",
            "Shirts",
            "Trousers",
            "Knitwear",
            "Coats",
            "Shoes",
            "Bags",
            "Jewellery",
            "Sale",
            "New in",
            "Bestsellers",
            "Gift guide",
            "Stores",
            "Sizing",
            "Delivery",
            "Returns",
            "Account",
            "Wishlist",
            "Basket",
            "Help",
            "Careers",
        ],
    ),
    (
        "sports-club",
        "https://www.meadowbank-athletic.org.uk/",
        [
            "Meadowbank Athletic",
            "Home",
            "Club",
            "History",
            "Committee",
            "Coaching",
            "Juniors",
            "Seniors",
            "Masters",
            "Fixtures",
            "Results",
            "Records",
            "Training",
            "Membership",
            "Fees",
            "Kit",
            "Sponsors",
            "Gallery",
            "News",
            "Events",
            "Volunteers",
            "Safeguarding",
            "Contact",
            "Login",
            "Shop",
        ],
    ),
]

# --- Lists. Bullet lists (over 90% bullet lines) and ellipsis teasers: gopher_quality. Plain lists of
# short, unpunctuated lines: fineweb_quality. Number tables: gopher_quality. -------------------------
BULLET_LISTS: list[tuple[str, str, str, list[str]]] = [
    (
        "packing-list",
        "https://www.family-camping-hub.com/checklists/packing",
        "•",
        [
            "Tent with poles and pegs",
            "Sleeping bags for everyone",
            "Inflatable mattresses and pump",
            "Camping stove and spare gas",
            "Matches and a lighter",
            "Pots, pans and a kettle",
            "Plates, cups and cutlery",
            "Cool box with ice packs",
            "Head torches and batteries",
            "First aid kit and plasters",
            "Sun cream and insect repellent",
            "Waterproof jackets for all",
            "Warm hats and gloves",
            "Towels and wash bags",
            "Folding chairs and a table",
            "Rubbish bags and washing up liquid",
            "Games and a pack of cards",
            "Phone chargers and a power bank",
            "Maps of the local area",
            "Booking confirmation for the site",
        ],
    ),
    (
        "product-features",
        "https://www.brightbean-coffee-machines.com/models/barista-pro",
        "-",
        [
            "Fifteen bar pump for rich espresso",
            "Built-in conical burr grinder",
            "Thirty grind size settings",
            "Steam wand for silky milk foam",
            "Removable two litre water tank",
            "Digital temperature control",
            "Pre-infusion for even extraction",
            "Single and double shot filters",
            "Automatic cleaning programme",
            "Energy saving standby mode",
            "Stainless steel housing",
            "Cup warmer on the top plate",
            "Descaling alert on the display",
            "Compact width of thirty centimetres",
            "Two year manufacturer warranty",
            "Compatible with most milk jugs",
            "Tamper and dosing cup included",
            "Quiet grinding motor",
            "Easy access drip tray",
            "Available in three colours",
        ],
    ),
    (
        "course-outline",
        "https://www.learn-photography-online.com/courses/beginners/outline",
        "•",
        [
            "How a camera turns light into a picture",
            "Aperture and depth of field explained",
            "Freezing motion with fast shutter speeds",
            "Sensitivity settings and image noise",
            "Metering modes and tricky exposures",
            "Composition rules and when to break them",
            "Working with soft morning light",
            "Flash photography without harsh shadows",
            "Portraits of friends and family",
            "Landscapes at sunrise and sunset",
            "Street photography etiquette",
            "Editing basics on a laptop",
            "Correcting colour casts",
            "Converting images to monochrome",
            "Printing photographs at home",
            "Building a small portfolio",
            "Final review session with a tutor",
            "Certificate awarded on completion",
            "Feedback from a tutor every fortnight",
            "Access to the forum for one year",
        ],
    ),
    (
        "wedding-checklist",
        "https://www.happily-planned-weddings.com/checklist",
        "-",
        [
            "Set a budget with both families",
            "Choose a date and a venue",
            "Book the registrar or celebrant",
            "Send save the date cards",
            "Find a photographer you trust",
            "Choose the dress and the suits",
            "Book a caterer and taste the menu",
            "Order the wedding cake",
            "Hire a band or a disc jockey",
            "Arrange flowers for the ceremony",
            "Plan transport for the guests",
            "Book rooms for visiting relatives",
            "Send the formal invitations",
            "Buy the rings and have them engraved",
            "Write the vows and the speeches",
            "Plan the seating for the reception",
            "Confirm numbers with the venue",
            "Pack for the honeymoon",
            "Prepare payments for the suppliers",
            "Relax and enjoy the day",
        ],
    ),
    (
        "moving-house",
        "https://www.smoothmove-removals.co.uk/advice/moving-checklist",
        "•",
        [
            "Get three quotes from removal firms",
            "Book the removal date early",
            "Collect boxes and packing tape",
            "Declutter each room before packing",
            "Label every box with its room",
            "Pack a box of essentials for the first night",
            "Tell your bank about the new address",
            "Update your address with your employer",
            "Redirect your post for six months",
            "Register with a new doctor",
            "Arrange meter readings on the day",
            "Transfer your broadband contract",
            "Cancel the old council tax account",
            "Measure doorways for large furniture",
            "Defrost the freezer the day before",
            "Keep important documents with you",
            "Take photographs of the empty house",
            "Leave keys with the estate agent",
            "Check the new smoke alarms",
            "Introduce yourself to the neighbours",
        ],
    ),
]

ELLIPSIS_TEASERS: list[tuple[str, str, list[str]]] = [
    (
        "news-teasers",
        "https://www.dailyharbour-news.com/latest",
        [
            "Council approves plan to rebuild the old harbour wall after years of delay...",
            "Local bakery wins national award for its traditional sourdough loaves and pastries...",
            "Police appeal for witnesses after a collision on the coast road on Sunday night...",
            "School children raise thousands of pounds for the lifeboat station with a sponsored swim...",
            "Ferry timetable changes announced for the winter season as crossings are reduced...",
            "Historic cinema to reopen next spring after a long and expensive restoration project...",
            "Residents object to new housing development on the edge of the nature reserve...",
            "Football club appoints former captain as manager until the end of the season...",
            "Storm warning issued for the weekend with strong winds expected along the coast...",
            "Volunteers plant five hundred trees in the park to mark the anniversary of the town...",
        ],
    ),
    (
        "blog-archive",
        "https://www.slow-travel-diaries.com/archive",
        [
            "Three days walking the coastal path from one fishing village to the next and what I learned...",
            "Why I stopped planning every hour of my holidays and started enjoying them more...",
            "The little train that climbs through the mountains and the people I met on board...",
            "A week of cooking lessons with a family in a village high above the lake...",
            "How to travel light with only a small backpack for a whole month on the road...",
            "The best overnight ferries in Europe and why they beat flying for short trips...",
            "Learning enough of the local language to order breakfast and make new friends...",
            "Rainy days in the city and the museums that turned them into the highlight of the trip...",
            "What happened when I missed the last bus and had to ask a stranger for help...",
            "Notes from a quiet island where the shop opens only two hours each day...",
        ],
    ),
]

PLAIN_LISTS: list[tuple[str, str, list[str]]] = [
    (
        "kitchen-catalogue",
        "https://shop.kettle-and-co.com/kitchen/all",
        [
            "Kitchen Tools and Gadgets",
            "Stainless steel garlic press",
            "Cast iron skillet with pour spouts",
            "Salt and pepper mill set",
            "Silicone spatula and spoon set",
            "Bamboo chopping board large",
            "Digital kitchen scales with timer",
            "Glass mixing bowls set of three",
            "Ceramic knife sharpener with guide",
            "Enamel casserole dish with lid",
            "Wooden rolling pin for pastry",
            "Stainless steel measuring cups",
            "Citrus juicer with pouring jug",
            "Nonstick baking tray for cookies",
            "Whisk and beater set for baking",
            "Cheese grater with four sides",
            "Herb scissors with five blades",
            "Oven gloves with heat protection",
            "Vegetable peeler with soft grip",
            "Pasta maker with two cutters",
            "Tea towels and aprons in linen",
        ],
    ),
    (
        "film-listings",
        "https://www.picturehouse-listings.com/this-week",
        [
            "Films Showing This Week",
            "The Lighthouse Keeper and the Storm",
            "A Summer in the Hills of Tuscany",
            "Return of the Night Riders",
            "The Last Train to the Coast",
            "Secrets of the Deep Blue Ocean",
            "Paper Moons and Distant Stars",
            "The Baker and the Bicycle Thief",
            "Winter Games on the Frozen Lake",
            "A Long Way Home for Christmas",
            "The Clockmaker and His Daughter",
            "Voices from the Old Mill Town",
            "City of Bridges and Broken Promises",
            "The Astronaut Who Came Back",
            "Dancing with the Shadow of the Moon",
            "Letters to a Stranger in Paris",
            "The Garden Behind the Wall",
            "Kings and Queens of the Market",
            "Running with the Wild Horses",
            "Tales of the Quiet Forest",
            "The Sound of Rain on the Roof",
        ],
    ),
    (
        "tag-cloud",
        "https://www.craft-and-home-blog.com/tags",
        [
            "Browse Posts by Topic",
            "Knitting patterns for beginners",
            "Sewing projects with old fabric",
            "Upcycled furniture and paint ideas",
            "Candle making with soy wax",
            "Homemade soap and bath bombs",
            "Paper crafts for rainy days",
            "Embroidery stitches and hoops",
            "Crochet blankets and baby hats",
            "Pottery and air dry clay",
            "Wreaths and seasonal decorations",
            "Quilting with scraps and panels",
            "Macrame wall hangings and plant holders",
            "Gift wrapping with recycled paper",
            "Painting rocks with the kids",
            "Jewellery making with beads and wire",
            "Woodwork for the garden and patio",
            "Card making for birthdays",
            "Scrapbooking with family photos",
            "Felt toys and finger puppets",
            "Crafts with pine cones and leaves",
        ],
    ),
]

NUMBER_TABLES: list[tuple[str, str, str]] = [
    (
        "bus-timetable",
        "https://www.coastline-buses.co.uk/timetables/route-42",
        "Route 42 Monday to Friday\n"
        + "\n".join(
            " ".join(
                f"{(6 * 60 + 15 + 37 * row + 11 * col) // 60:02d}:{(6 * 60 + 15 + 37 * row + 11 * col) % 60:02d}"
                for col in range(8)
            )
            for row in range(14)
        ),
    ),
    (
        "price-table",
        "https://www.fuel-prices-tracker.com/regional/2024",
        "Average prices per litre by month\n"
        + "\n".join(
            f"{2024} {month:02d} "
            + " ".join(
                f"{140 + (month * 7 + col * 3) % 23}.{(month * 13 + col * 7) % 10}" for col in range(6)
            )
            for month in range(1, 13)
        ),
    ),
]
# --- Junk that passes every heuristic filter but reads like spam, scams or chat: the fastText quality
# model scores it far below 0.5, so score_threshold removes it. (slug, url, text) -------------------
LOW_SCORE_PAGES: list[tuple[str, str, str]] = [
    (
        "pharmacy-spam",
        "https://www.cheap-meds-online-rx.biz/special-offer",
        """Special offer for our valued customers! Get the best prices on all your medications today with no prescription needed. We ship worldwide in discreet packaging and delivery takes only 3 to 5 days.

Save up to 80 percent compared to your local pharmacy! Order now and get free bonus pills with every order over 100 dollars. We accept all major credit cards and bitcoin.

Limited time only!!! Do not miss this amazing opportunity to save money on your health. Click the link below to visit our secure online store and claim your discount now. Satisfaction guaranteed or your money back!!!

To unsubscribe from this list, reply with REMOVE in the subject line.""",
    ),
    (
        "work-from-home",
        "https://www.easy-money-from-home-now.net/start",
        """ATTENTION!!! Are you tired of working for a boss? Do you want to earn 5000 dollars a week from home with just your laptop? Thousands of people are already doing it and now it is your turn!

Our secret system requires no experience, no selling and no special skills. Just follow our simple steps for one hour a day and watch the money roll into your account. Start today and you could be earning by tomorrow!

This offer will not last long. We only accept 50 new members this month, so act now before it is too late. Enter your email below to get instant access to the free video that will change your life forever!!!""",
    ),
    (
        "chat-log",
        "https://forums.casual-chatter.net/threads/whats-everyone-up-to.9921",
        """hey guys whats up lol
not much just got home from work, so tired tbh.
same here, my boss was being so annoying today haha.
lol what did he do this time?
he made me redo the whole report again for no reason!!
wow thats so annoying, i would have just walked out lol.
haha i wish i could but i need the money rn.
true true, anyone watching the game tonight?
yeah im watching it with my bro later, gonna order pizza.
nice!! save me a slice lol
haha no way, get your own!!""",
    ),
    (
        "lottery-winner",
        "https://www.intl-lottery-award-centre.org/winners",
        """CONGRATULATIONS!!! Your email address has won a huge cash prize of nearly one million pounds in our international online lottery draw held this week. Your ticket was chosen at random from millions of entries worldwide.

To claim your prize, you must contact our claims agent immediately with your winning number, full name, age, address and telephone number. Please note that a small processing fee is required to release your winnings.

All winners must keep this notice confidential until the claim is processed, to avoid double claiming. Failure to respond within one week will result in your prize being cancelled. Congratulations once again from all our staff!!!""",
    ),
    (
        "crypto-giveaway",
        "https://www.official-coin-giveaway-event.io/claim",
        """HUGE GIVEAWAY EVENT!!! To celebrate our anniversary we are giving away thousands of coins to our community. This is not a joke and it is happening right now for a limited time only!

To participate, simply send any amount of coins to the address below and we will immediately send back double the amount to the address you sent from. If you send one coin, you get two back. If you send ten coins, you get twenty back!

Only the first thousand participants will receive the bonus, so hurry up!!! Thousands of people have already received their coins. Do not miss out on this once in a lifetime opportunity!!!""",
    ),
]

# --- Pages the C4 and FineWeb line rules catch. (slug, url, text, expected stage, expected reason) --
# lorem ipsum left in a template, and code with curly brackets: c4_quality rejects the document.
# An article with a repeated inline advertisement line (duplicated-line characters above 1%), and
# verse set in short lines (every line at most 30 characters): fineweb_quality.
LINE_RULE_PAGES: list[tuple[str, str, str, str, str]] = [
    (
        "lorem-services",
        "https://www.brightpath-consulting.com/services",
        """Our Services

We help small businesses plan their growth, manage their finances and find the right people for their teams. Every engagement starts with a free conversation about your goals.

Our consultants have worked with shops, restaurants, workshops and local charities for more than fifteen years. We believe that good advice should be practical, affordable and easy to act on.

Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.

Contact us today to arrange your first meeting with one of our advisers. We are happy to meet at your premises or online, whichever suits you best.""",
        "c4_quality",
        "lorem_ipsum",
    ),
    (
        "lorem-team",
        "https://www.greenway-architects.co.uk/about/team",
        """Meet the Team

Our practice was founded by two architects who wanted to design homes that are comfortable, efficient and built to last. Today the team includes designers, engineers and a landscape architect.

We work closely with every client from the first sketch to the day they move in. Each project is different, and we enjoy the challenge of finding the right answer for each site and each family.

Team member biography coming soon. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.

If you would like to discuss a project, please get in touch. We would be delighted to hear about your plans and to show you some of our recent work.""",
        "c4_quality",
        "lorem_ipsum",
    ),
    (
        "css-snippet",
        "https://www.webcraft-notes.com/css/centering-an-element",
        """Centering an Element with Flexbox

Centering something on a web page used to involve awkward tricks with margins and positioning. Modern browsers support flexible box layout, which makes the job much simpler and works for both horizontal and vertical centering.

The idea is to turn the parent element into a flex container and tell it how to align its children. The following rule centres everything inside a container with the class name wrapper:

.wrapper { display: flex; justify-content: center; align-items: center; min-height: 100vh; }

The first property switches on flexible layout, the second centres the children along the main axis, and the third centres them along the cross axis. The minimum height makes the container fill the screen, so the content sits in the middle of the window.

This approach works for text, images and whole panels, and it adapts automatically when the window is resized.""",
        "c4_quality",
        "curly_bracket",
    ),
    (
        "json-config",
        "https://docs.tinyserve-project.org/guide/configuration",
        """Configuring the Server

The server reads its settings from a small configuration file in the project folder. If the file is missing, sensible defaults are used, so you only need to write the settings you want to change.

Most people start by choosing the port and the folder that holds their pages. A minimal file looks like this:

{ "port": 8080, "root": "public", "cache": true }

The port is the number the server listens on, and the root is the folder whose files are served. Caching keeps recently requested files in memory, which makes repeated requests much faster.

After editing the file, restart the server so that the new settings take effect. Any mistake in the file is reported when the server starts, together with the line where it was found.""",
        "c4_quality",
        "curly_bracket",
    ),
    (
        "repeated-ad-line",
        "https://www.localnews-eastbury.com/2024/06/new-footbridge-opens",
        """New Footbridge Opens Across the River Wey

The new footbridge linking the town centre with the riverside park opened to the public on Saturday morning, three months later than planned.

Hundreds of residents gathered to watch the mayor cut the ribbon, and a brass band from the secondary school played on the riverbank.

Story continues below advertisement.

The bridge replaces a narrow crossing that was closed two years ago after engineers found serious corrosion in its supports.

Since then, pedestrians have faced a long detour via the road bridge, which has no separate path for cyclists.

Story continues below advertisement.

The new structure is wide enough for walkers and cyclists to pass each other safely, with gentle ramps at both ends for wheelchairs and pushchairs.

Lighting built into the handrails means that it can be used after dark, and the deck is made of a non-slip composite.

Story continues below advertisement.

The council says the project came in slightly under budget. Work to landscape the approaches on the park side will continue through the summer.""",
        "fineweb_quality",
        "char_dup_ratio",
    ),
    (
        "repeated-subscribe-line",
        "https://www.garden-weekly-news.com/2024/04/tomatoes-early-start",
        """Giving Tomatoes an Early Start

Tomatoes need a long, warm season to ripen, so gardeners in cooler regions usually sow them indoors in early spring.

A bright windowsill or a heated propagator gives the seedlings the warmth they need to germinate within a week or two.

Sponsored content appears below.

Once the first true leaves appear, move each seedling into its own small pot, burying the stem a little deeper than before.

Tomatoes grow roots along the buried stem, which produces sturdier plants that cope better with wind.

Sponsored content appears below.

Harden the plants off gradually before planting them outside, standing them outdoors during the day and bringing them in at night.

After about a week they can stay out, but plant them in the ground only when the risk of frost has passed.

Sponsored content appears below.

Water regularly once the first flowers appear, and feed every week with a liquid fertiliser rich in potassium.""",
        "fineweb_quality",
        "char_dup_ratio",
    ),
    (
        "verse-river",
        "https://www.poetry-corner-community.org/members/the-river-in-winter",
        """The River in Winter
The river slows,
the ice grows thin,
the herons wait,
the cold comes in.
The willows bend,
the reeds stand pale,
a robin sings
against the gale.
But under glass
the water creeps,
it carries rain,
it rocks and sleeps.
And when the thaw
comes up the vale,
the river wakes
to tell its tale.
It tells of snow
and frozen nights,
of silver fish
and northern lights.""",
        "fineweb_quality",
        "short_line_ratio",
    ),
    (
        "verse-harbour",
        "https://www.poetry-corner-community.org/members/harbour-at-dusk",
        """Harbour at Dusk
The boats come home
at close of day,
the gulls fly low
across the bay.
The nets come in,
the lanterns glow,
the old men talk
of long ago.
The children fish
from the warm wall,
they count the crabs
and watch them crawl.
And when the tide
begins to turn,
the harbour sleeps,
the lamps still burn.
The stars come out
above the quay,
and all is calm
upon the sea.""",
        "fineweb_quality",
        "short_line_ratio",
    ),
]

# --- Code candidates (DESIGN.md format). expected: kept, or verify with the reason. ------------------
# (slug, expected reason or "" for admitted, prompt, solution, tests, entry_point or None)
CODE_CANDIDATES: list[tuple[str, str, str, str, str, str | None]] = [
    (
        "is-palindrome",
        "",
        "Write a function is_palindrome(s) that returns True when s reads the same forwards and backwards, ignoring case and non-alphanumeric characters.",
        "def is_palindrome(s):\n    cleaned = [c.lower() for c in s if c.isalnum()]\n    return cleaned == cleaned[::-1]\n",
        "assert is_palindrome('A man, a plan, a canal: Panama')\nassert not is_palindrome('hello')\nassert is_palindrome('')\n",
        None,
    ),
    (
        "fizzbuzz",
        "",
        "Write a function fizzbuzz(n) returning the list of FizzBuzz strings for 1..n.",
        "def fizzbuzz(n):\n    out = []\n    for i in range(1, n + 1):\n        if i % 15 == 0:\n            out.append('FizzBuzz')\n        elif i % 3 == 0:\n            out.append('Fizz')\n        elif i % 5 == 0:\n            out.append('Buzz')\n        else:\n            out.append(str(i))\n    return out\n",
        "def check(candidate):\n    assert candidate(5) == ['1', '2', 'Fizz', '4', 'Buzz']\n    assert candidate(15)[-1] == 'FizzBuzz'\n    assert candidate(0) == []\n",
        "fizzbuzz",
    ),
    (
        "word-count",
        "",
        "Write a function word_counts(text) that returns a dict mapping each lower-cased word to the number of times it occurs.",
        "from collections import Counter\n\n\ndef word_counts(text):\n    return dict(Counter(text.lower().split()))\n",
        "assert word_counts('the cat and The dog') == {'the': 2, 'cat': 1, 'and': 1, 'dog': 1}\nassert word_counts('') == {}\n",
        None,
    ),
    (
        "binary-search",
        "",
        "Write a function binary_search(items, target) that returns the index of target in the sorted list items, or -1 if it is absent.",
        "def binary_search(items, target):\n    lo, hi = 0, len(items) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n        if items[mid] == target:\n            return mid\n        if items[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid - 1\n    return -1\n",
        "def check(candidate):\n    assert candidate([1, 3, 5, 7, 9], 7) == 3\n    assert candidate([1, 3, 5, 7, 9], 4) == -1\n    assert candidate([], 1) == -1\n    assert candidate([2], 2) == 0\n",
        "binary_search",
    ),
    (
        "flatten",
        "",
        "Write a function flatten(nested) that flattens arbitrarily nested lists of integers into a single list.",
        "def flatten(nested):\n    result = []\n    for item in nested:\n        if isinstance(item, list):\n            result.extend(flatten(item))\n        else:\n            result.append(item)\n    return result\n",
        "assert flatten([1, [2, [3, 4]], 5]) == [1, 2, 3, 4, 5]\nassert flatten([]) == []\nassert flatten([[[]]]) == []\n",
        None,
    ),
    (
        "gcd",
        "",
        "Write a function gcd(a, b) returning the greatest common divisor of two non-negative integers.",
        "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
        "def check(candidate):\n    assert candidate(12, 18) == 6\n    assert candidate(17, 5) == 1\n    assert candidate(0, 9) == 9\n",
        "gcd",
    ),
    (
        "roman-numerals",
        "",
        "Write a function to_roman(n) converting an integer from 1 to 3999 into a Roman numeral.",
        "def to_roman(n):\n    values = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'),\n              (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]\n    out = []\n    for value, symbol in values:\n        while n >= value:\n            out.append(symbol)\n            n -= value\n    return ''.join(out)\n",
        "assert to_roman(1994) == 'MCMXCIV'\nassert to_roman(4) == 'IV'\nassert to_roman(3999) == 'MMMCMXCIX'\n",
        None,
    ),
    (
        "run-length",
        "",
        "Write a function rle(s) that run-length encodes a string, e.g. 'aaabcc' becomes 'a3b1c2'.",
        "def rle(s):\n    if not s:\n        return ''\n    out = []\n    current, count = s[0], 1\n    for ch in s[1:]:\n        if ch == current:\n            count += 1\n        else:\n            out.append(f'{current}{count}')\n            current, count = ch, 1\n    out.append(f'{current}{count}')\n    return ''.join(out)\n",
        "assert rle('aaabcc') == 'a3b1c2'\nassert rle('') == ''\nassert rle('z') == 'z1'\n",
        None,
    ),
    (
        "max-subarray-wrong",
        "tests_failed",
        "Write a function max_subarray(nums) returning the largest sum of a non-empty contiguous subarray.",
        "def max_subarray(nums):\n    best = 0\n    current = 0\n    for x in nums:\n        current = max(0, current + x)\n        best = max(best, current)\n    return best\n",
        "def check(candidate):\n    assert candidate([-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6\n    assert candidate([-3, -1, -2]) == -1\n",
        "max_subarray",
    ),
    (
        "median-wrong",
        "tests_failed",
        "Write a function median(values) returning the median of a non-empty list of numbers.",
        "def median(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n",
        "assert median([3, 1, 2]) == 2\nassert median([4, 1, 3, 2]) == 2.5\n",
        None,
    ),
    (
        "off-by-one-range",
        "tests_failed",
        "Write a function sum_to(n) returning 1 + 2 + ... + n.",
        "def sum_to(n):\n    return sum(range(n))\n",
        "assert sum_to(1) == 1\nassert sum_to(10) == 55\n",
        None,
    ),
    (
        "title-case-wrong",
        "tests_failed",
        "Write a function title_words(s) that capitalises the first letter of every word and lower-cases the rest.",
        "def title_words(s):\n    return ' '.join(w[0].upper() + w[1:] for w in s.split())\n",
        "assert title_words('hello WORLD') == 'Hello World'\n",
        None,
    ),
    (
        "infinite-loop",
        "timeout",
        "Write a function count_digits(n) returning the number of decimal digits of a positive integer n.",
        "def count_digits(n):\n    count = 0\n    while n > 0:\n        count += 1\n        n // 10\n    return count\n",
        "assert count_digits(123) == 3\nassert count_digits(7) == 1\n",
        None,
    ),
    (
        "syntax-error",
        "syntax_error",
        "Write a function square(x) returning x squared.",
        "def square(x)\n    return x * x\n",
        "assert square(3) == 9\n",
        None,
    ),
    (
        "no-assertions",
        "no_tests",
        "Write a function greet(name) returning a greeting.",
        "def greet(name):\n    return 'Hello, ' + name\n",
        "print(greet('Ada'))\n",
        None,
    ),
    (
        "raises-exception",
        "tests_failed",
        "Write a function safe_divide(a, b) that returns a / b, or None when b is zero.",
        "def safe_divide(a, b):\n    return a / b\n",
        "assert safe_divide(6, 3) == 2\nassert safe_divide(1, 0) is None\n",
        None,
    ),
]

# --- Math candidates. expected: kept, or verify with the reason. ------------------------------------
# (slug, expected reason or "" for admitted, problem, solution, answer)
MATH_CANDIDATES: list[tuple[str, str, str, str, str]] = [
    (
        "apples-boxes",
        "",
        "A farmer packs 48 apples into boxes of 6. He sells each box for 4 dollars. How much money does he make?",
        "He fills 48/6=<<48/6=8>>8 boxes.\nSelling them brings in 8*4=<<8*4=32>>32 dollars.\n#### 32",
        "32",
    ),
    (
        "reading-pages",
        "",
        "Maya reads 25 pages a day for 12 days and then 40 pages on the last day. How many pages did she read?",
        "In the first 12 days she reads 25*12=<<25*12=300>>300 pages.\nAdding the last day gives 300+40=<<300+40=340>>340 pages.\n#### 340",
        "340",
    ),
    (
        "bakery-discount",
        "",
        "A cake costs 30 dollars and is sold at a 20% discount. What is the sale price?",
        "The discount is 30*0.2=<<30*0.2=6>>6 dollars.\nThe sale price is 30-6=<<30-6=24>>24 dollars.\n#### 24",
        "24",
    ),
    (
        "train-distance",
        "",
        "A train travels at 80 km per hour for 3 hours and then at 60 km per hour for 2 hours. How far does it travel?",
        "First part: 80*3=<<80*3=240>>240 km.\nSecond part: 60*2=<<60*2=120>>120 km.\nTotal: 240+120=<<240+120=360>>360 km.\n#### 360",
        "360",
    ),
    (
        "fraction-sum",
        "",
        "Compute $\\frac{1}{2} + \\frac{1}{3}$.",
        "With a common denominator of 6, $\\frac{1}{2} + \\frac{1}{3} = \\frac{3}{6} + \\frac{2}{6} = \\frac{5}{6}$.\nThe answer is $\\boxed{\\frac{5}{6}}$.",
        "5/6",
    ),
    (
        "quadratic-roots",
        "",
        "What is the sum of the roots of $x^2 - 7x + 10 = 0$?",
        "The equation factors as $(x-2)(x-5)=0$, so the roots are 2 and 5, and their sum is $2 + 5 = 7$.\n\\boxed{7}",
        "7",
    ),
    (
        "rectangle-area",
        "",
        "A garden is 12 metres long and 7 metres wide. A path covers 9 square metres of it. How many square metres are left for planting?",
        "The garden's area is 12*7=<<12*7=84>>84 square metres.\nThe planting area is 84-9=<<84-9=75>>75 square metres.\n#### 75",
        "75",
    ),
    (
        "savings-weeks",
        "",
        "Tom saves 15 dollars a week. How many weeks does he need to save 180 dollars?",
        "He needs 180/15=<<180/15=12>>12 weeks.\n#### 12",
        "12",
    ),
    (
        "wrong-final-answer",
        "wrong_answer",
        "A class has 24 students and each needs 3 notebooks. Notebooks come in packs of 8. How many packs are needed?",
        "The class needs 24*3=<<24*3=72>>72 notebooks.\nThat is 72/8=<<72/8=9>>9 packs.\n#### 8",
        "9",
    ),
    (
        "wrong-boxed",
        "wrong_answer",
        "Compute $3^4 - 2^5$.",
        "We have $3^4 = 81$ and $2^5 = 32$, so the result is 81 minus 32.\n\\boxed{47}",
        "49",
    ),
    (
        "wrong-answer-words",
        "wrong_answer",
        "A bus carries 42 passengers. At the first stop 15 get off and 9 get on. How many passengers are on the bus now?",
        "After the first stop there are 42-15=<<42-15=27>>27 passengers, and then 27+9=<<27+9=36>>36.\n#### 35",
        "36",
    ),
    (
        "bad-calculator-step",
        "bad_step",
        "Lena buys 7 pens at 3 dollars each and a notebook for 5 dollars. How much does she spend?",
        "The pens cost 7*3=<<7*3=24>>24 dollars.\nIn total she spends 24+5=<<24+5=29>>29 dollars.\n#### 29",
        "29",
    ),
    (
        "bad-step-division",
        "bad_step",
        "A rope 96 metres long is cut into 8 equal pieces. How long is each piece?",
        "Each piece is 96/8=<<96/8=11>>11 metres long.\n#### 12",
        "12",
    ),
    (
        "bad-step-chain",
        "bad_step",
        "Compute $6 \\cdot 7 + 8$.",
        "We get $6 \\cdot 7 + 8 = 42 + 8 = 52$.\n\\boxed{50}",
        "50",
    ),
    (
        "no-final-answer",
        "no_answer",
        "How many minutes are there in a day?",
        "To find the number of minutes in a day, multiply the number of hours in a day by the number of minutes in an hour.",
        "1440",
    ),
]
CODE_CANDIDATES += [
    (
        "merge-intervals",
        "",
        "Write a function merge_intervals(intervals) that merges overlapping [start, end] intervals and returns them sorted.",
        "def merge_intervals(intervals):\n    merged = []\n    for start, end in sorted(intervals):\n        if merged and start <= merged[-1][1]:\n            merged[-1][1] = max(merged[-1][1], end)\n        else:\n            merged.append([start, end])\n    return merged\n",
        "def check(candidate):\n    assert candidate([[1, 3], [2, 6], [8, 10], [15, 18]]) == [[1, 6], [8, 10], [15, 18]]\n    assert candidate([[1, 4], [4, 5]]) == [[1, 5]]\n    assert candidate([]) == []\n",
        "merge_intervals",
    ),
    (
        "anagrams",
        "",
        "Write a function are_anagrams(a, b) that says whether two words are anagrams of each other, ignoring case.",
        "def are_anagrams(a, b):\n    return sorted(a.lower()) == sorted(b.lower())\n",
        "assert are_anagrams('Listen', 'Silent')\nassert not are_anagrams('apple', 'paple ')\nassert are_anagrams('', '')\n",
        None,
    ),
    (
        "prime-sieve",
        "",
        "Write a function primes_below(n) returning the list of primes smaller than n.",
        "def primes_below(n):\n    if n < 3:\n        return []\n    sieve = [True] * n\n    sieve[0] = sieve[1] = False\n    for i in range(2, int(n ** 0.5) + 1):\n        if sieve[i]:\n            sieve[i * i :: i] = [False] * len(range(i * i, n, i))\n    return [i for i, is_prime in enumerate(sieve) if is_prime]\n",
        "assert primes_below(20) == [2, 3, 5, 7, 11, 13, 17, 19]\nassert primes_below(2) == []\nassert primes_below(3) == [2]\n",
        None,
    ),
    (
        "fibonacci-wrong",
        "tests_failed",
        "Write a function fib(n) returning the n-th Fibonacci number, with fib(0) = 0 and fib(1) = 1.",
        "def fib(n):\n    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        "assert fib(0) == 0\nassert fib(1) == 1\nassert fib(10) == 55\n",
        None,
    ),
]

MATH_CANDIDATES += [
    (
        "percent-increase",
        "",
        "A shop raises the price of a 40 dollar jacket by 15%. What is the new price?",
        "The increase is 40*0.15=<<40*0.15=6>>6 dollars.\nThe new price is 40+6=<<40+6=46>>46 dollars.\n#### 46",
        "46",
    ),
    (
        "answer-phrase",
        "",
        "Sam has 3 boxes with 14 marbles each and gives away 12 marbles. How many marbles does he have left?",
        "Sam starts with 3*14=<<3*14=42>>42 marbles.\nAfter giving some away he has 42-12=<<42-12=30>>30 marbles.\nThe answer is 30.",
        "30",
    ),
    (
        "wrong-fraction",
        "wrong_answer",
        "Simplify $\\frac{18}{24}$.",
        "Dividing the numerator and the denominator by 6 gives the simplified fraction.\n\\boxed{\\frac{2}{3}}",
        "3/4",
    ),
    (
        "bad-step-subtraction",
        "bad_step",
        "A tank holds 500 litres and 185 litres are used. How many litres remain?",
        "The tank has 500-185=<<500-185=325>>325 litres left.\n#### 315",
        "315",
    ),
]


# --- Composition ----------------------------------------------------------------------------------
# Stages of recipes/fineweb.toml; a fate at any other stage of the default recipe becomes "kept" there,
# except exact duplicates, which FineWeb's MinHash stage removes instead (identical texts, Jaccard 1).
FINEWEB_STAGES = (
    "url_filter",
    "language",
    "gopher_repetition",
    "gopher_quality",
    "c4_quality",
    "fineweb_quality",
    "minhash_dedup",
    "pii_redact",
)

# Exact copies: (slug of the original, url of the copy, whitespace variant). The variant joins the
# paragraphs with one newline instead of a blank line: the same text after normalization, and shorter,
# so the original survives on every tie-break (equal scores, then longest text, then smallest id).
EXACT_COPIES = [
    (
        "glacier-valleys",
        "https://www.geography-field-notes.com/landforms/how-glaciers-carve-valleys?utm_source=newsletter",
        False,
    ),
    ("rooftop-solar", "http://homeenergy-advice.com/renewables/is-rooftop-solar-right-for-you", False),
    ("silk-road", "https://mirror.worldhistory-archive.net/trade/life-on-the-silk-road", True),
    (
        "new-orleans-jazz",
        "https://musichistory-notes.org/genres/the-birth-of-jazz-in-new-orleans?utm_campaign=spring",
        False,
    ),
    ("coral-bleaching", "https://oceanwatch.org/reefs/what-causes-coral-bleaching?page=1", True),
    ("beekeeping-first-year", "https://www.apiary-apprentice.org/print/your-first-year-keeping-bees", True),
    (
        "stargazing-binoculars",
        "https://astronomy-for-everyone.org/observing/stargazing-with-binoculars#comments",
        False,
    ),
    (
        "kimchi-fermentation",
        "https://www.seoulkitchen-stories.com/recipes/making-kimchi-at-home?ref=pinterest",
        False,
    ),
    (
        "telephone-invention",
        "https://inventions-archive.org/communication/the-invention-of-the-telephone",
        True,
    ),
    (
        "cover-letter",
        "https://careerlaunch-guide.com/applications/writing-a-cover-letter?share=twitter",
        False,
    ),
    ("ukulele", "https://strumtogether.com/lessons/learning-the-ukulele-as-an-adult/print", True),
    (
        "urban-heat-island",
        "https://citiesandclimate.org/research/the-urban-heat-island-effect?lang=en",
        False,
    ),
    ("sundials", "https://www.timekeeping-history.org/instruments/how-sundials-tell-time/amp", True),
    (
        "map-projections",
        "https://cartography-corner.com/basics/why-every-world-map-is-wrong?utm_medium=social",
        False,
    ),
    ("black-holes", "https://astronomy-for-everyone.org/cosmos/what-is-a-black-hole?print=1", True),
    ("origami", "https://www.paperfold-studio.com/learn/an-introduction-to-origami/", False),
]

# Near copies: (slug of the original, url of the copy, with a typo). A content farm's repost: the
# article without its title line, maybe with a typo, and a share-bait footer. That keeps the Jaccard
# similarity high (above 0.9 on word 5-grams), makes the copy shorter than the original (longest wins
# where there is no score) and scores it lower with the fastText quality model (highest score wins).
NEAR_FOOTER = "Like us on Facebook!!!"
NEAR_COPIES = [
    ("volcano-types", "https://www.geo-news-digest.com/2023/05/why-some-volcanoes-explode", False),
    ("houseplants-winter", "https://www.homeandgarden-aggregator.com/houseplants-through-the-winter", True),
    ("vaccines-immune", "https://health-news-roundup.com/2022/how-vaccines-teach-the-immune-system", False),
    ("birdwatching", "https://www.countryside-weekly.com/hobbies/birdwatching-for-beginners", True),
    ("noise-cancelling", "https://gadget-news-digest.com/noise-cancelling-explained", False),
    ("marie-curie", "https://science-people-digest.com/marie-curie-radioactivity", True),
    ("ev-batteries", "https://www.ev-news-aggregator.com/inside-the-battery", False),
    ("desert-plants", "https://www.garden-content-hub.com/desert-plants-survive", True),
    ("teaching-phonics", "https://parenting-content-hub.com/phonics-reading", False),
    ("container-shipping", "https://www.business-history-reposts.com/shipping-container", True),
    ("ice-cores", "https://climate-news-aggregator.org/ice-cores-explained", False),
    ("rivers-and-floodplains", "https://www.nature-content-hub.com/rivers-floodplains", True),
    ("wooden-boat-building", "https://diy-projects-digest.com/build-a-rowing-boat", False),
    ("history-of-chocolate", "https://www.food-history-reposts.com/chocolate", True),
    ("honeybee-waggle-dance", "https://www.nature-content-hub.com/bee-dance", False),
]
# Semantic rewrites reposted with content-farm furniture, so that the fastText model scores them below
# their originals: "header" adds a byline line, "footer" a share-bait footer ("short footer": the
# near copies' one, where the long one would push the rewrite below the score threshold).
REPOST_HEADER = "Posted by admin ... 0 comments ... 1,204 views"
REPOST_FOOTER = "Share this!!! Like us on Facebook!!!"
REWRITE_FURNITURE = {
    "sourdough-starter": ("header", "footer"),
    "how-tides-work": ("header", "footer"),
    "home-composting": ("short footer",),
    "photosynthesis": ("footer",),
    "wind-turbines": ("header", "footer"),
    "history-of-tea": ("footer",),
}

# Good articles crawled with their site's boilerplate around them: c4_quality strips the menu,
# cookie and javascript lines, and the article is kept. (slug, site name, menu, cookie, javascript)
WRAPPED = [
    (
        "how-planes-fly",
        "Aviation Explained",
        ["Home", "Basics", "Aircraft", "Airports", "Careers", "Quiz", "Contact"],
        0,
        0,
    ),
    (
        "tree-rings",
        "Forest Science Today",
        ["Home", "News", "Methods", "Ecology", "Podcasts", "Subscribe"],
        1,
        1,
    ),
    ("papyrus", "Ancient World Review", ["Home", "Engineering", "Writing", "Empires", "Maps", "Shop"], 2, 2),
    (
        "credit-scores",
        "Moneywise Basics",
        ["Home", "Saving", "Borrowing", "Pensions", "Tools", "Newsletter"],
        0,
        1,
    ),
    ("making-jam", "Preserving Pantry", ["Home", "Basics", "Jams", "Pickles", "Chutneys", "Equipment"], 1, 2),
    (
        "altitude-sickness",
        "High Peaks Trekking",
        ["Home", "Treks", "Safety", "Gear", "Guides", "Book now"],
        2,
        0,
    ),
]


def _typo(body: str) -> str:
    """Swap two letters in the first long word of the first paragraph (a scraped copy's typo)."""
    words = body.split(" ")
    for i, word in enumerate(words):
        if len(word) >= 8 and word.isalpha():
            words[i] = word[:3] + word[4] + word[3] + word[5:]
            return " ".join(words)
    raise ValueError("no word to misspell")


def _split_title(text: str) -> tuple[str, str]:
    title, body = text.split("\n\n", 1)
    return title, body


def fineweb_fate(expected: str) -> str:
    """The fate under recipes/fineweb.toml, derived from the fate under the default recipe."""
    if expected == "exact_dedup":
        return "minhash_dedup"
    return expected if expected in FINEWEB_STAGES else "kept"


def web(doc_id: str, url: str, text: str, category: str, expected: str, reason: str = "", **extra) -> dict:
    record = {"id": doc_id, "url": url, "text": text, "category": category, "expected": expected}
    if reason:
        record["expected_reason"] = reason
    record["expected_fineweb"] = fineweb_fate(expected)
    record.update(extra)
    return record


def nav_page(site_lines: list[str], index: int) -> str:
    cookie = COOKIE_BANNERS[index % len(COOKIE_BANNERS)]
    javascript = JAVASCRIPT_LINES[index % len(JAVASCRIPT_LINES)]
    footer = FOOTERS[index % len(FOOTERS)]
    title, *menu = site_lines
    half = len(menu) // 2
    return "\n".join([title, *menu[:half], cookie, javascript, *menu[half:], footer])


def articles() -> list[dict]:
    texts = {slug: (url, text) for slug, url, text in ARTICLES}
    assert len(texts) == len(ARTICLES), "duplicate article slug"
    wrapped = {slug: rest for slug, *rest in WRAPPED}
    records = []
    for slug, url, text in ARTICLES:
        if slug in wrapped:
            site, menu, cookie_i, js_i = wrapped[slug]
            cookie, javascript = COOKIE_BANNERS[cookie_i], JAVASCRIPT_LINES[js_i]
            page = "\n".join([site, *menu, cookie, text, javascript, FOOTERS[cookie_i % len(FOOTERS)]])
            records.append(
                web(
                    f"article-{slug}",
                    url,
                    page,
                    "good_article_with_boilerplate",
                    "kept",
                    expected_absent=[cookie, javascript],
                )
            )
        else:
            records.append(web(f"article-{slug}", url, text, "good_article", "kept"))
    for slug, url, text, addresses in PII_ARTICLES:
        records.append(web(f"pii-{slug}", url, text, "pii", "kept", expected_absent=addresses))
    return records


def duplicates() -> list[dict]:
    texts = {slug: text for slug, _, text in ARTICLES}
    wrapped = {slug for slug, *_ in WRAPPED}
    records = []
    for slug, url, whitespace in EXACT_COPIES:
        assert slug not in wrapped
        text = texts[slug].replace("\n\n", "\n") if whitespace else texts[slug]
        records.append(
            web(
                f"article-{slug}-copy",
                url,
                text,
                "exact_duplicate",
                "exact_dedup",
                "exact_duplicate",
                duplicate_of=f"article-{slug}",
            )
        )
    for slug, url, typo in NEAR_COPIES:
        assert slug not in wrapped
        _, body = _split_title(texts[slug])
        text = f"{_typo(body) if typo else body}\n{NEAR_FOOTER}"
        assert len(text) < len(texts[slug]), slug
        records.append(
            web(
                f"article-{slug}-near",
                url,
                text,
                "near_duplicate",
                "minhash_dedup",
                "near_duplicate",
                duplicate_of=f"article-{slug}",
            )
        )
    for slug, url, text in PARAPHRASES:
        assert len(text) < len(texts[slug]), slug
        furniture = REWRITE_FURNITURE[slug]
        title, body = _split_title(text)
        header = f"{REPOST_HEADER}\n" if "header" in furniture else ""
        footer = {"footer": f"\n{REPOST_FOOTER}", "short footer": f"\n{NEAR_FOOTER}"}
        footer = "".join(footer[f] for f in furniture if f in footer)
        text = f"{title}\n\n{header}{body}{footer}"
        records.append(
            web(
                f"article-{slug}-rewrite",
                url,
                text,
                "semantic_duplicate",
                "semantic_dedup",
                "semantic_duplicate",
                duplicate_of=f"article-{slug}",
            )
        )
    return records


def low_quality() -> list[dict]:
    records = []
    for i, (slug, url, lines) in enumerate(NAV_PAGES):
        records.append(
            web(
                f"nav-{slug}",
                url,
                nav_page(lines, i),
                "navigation_boilerplate",
                "c4_quality",
                "too_few_sentences",
            )
        )
    for slug, url, line in SPAM_LINES:
        text = "\n".join([line] * 15)
        records.append(web(f"spam-{slug}", url, text, "spam_repeated_lines", "gopher_repetition"))
    for slug, url, text in KEYWORD_STUFFED:
        records.append(web(f"spam-{slug}", url, text, "spam_keyword_stuffing", "gopher_repetition"))
    for slug, url, paragraph in REPEATED_PARAGRAPH:
        text = "\n\n".join([paragraph] * 6)
        records.append(web(f"spam-{slug}", url, text, "spam_repeated_paragraphs", "gopher_repetition"))
    for slug, url, bullet, items in BULLET_LISTS:
        text = "\n".join(f"{bullet} {item}" for item in items)
        records.append(
            web(f"list-{slug}", url, text, "bullet_list", "gopher_quality", "too_many_bullet_lines")
        )
    for slug, url, lines in ELLIPSIS_TEASERS:
        records.append(web(f"list-{slug}", url, "\n".join(lines), "ellipsis_list", "gopher_quality"))
    for slug, url, lines in PLAIN_LISTS:
        records.append(web(f"list-{slug}", url, "\n".join(lines), "plain_list", "fineweb_quality"))
    for slug, url, text in NUMBER_TABLES:
        # Digits only: the language identifier cannot call them English, long before gopher_quality.
        records.append(web(f"table-{slug}", url, text, "number_table", "language", "low_language_score"))
    for slug, url, text, stage, reason in LINE_RULE_PAGES:
        records.append(web(f"lines-{slug}", url, text, "line_rules", stage, reason))
    for slug, url, text in LOW_SCORE_PAGES:
        records.append(
            web(f"lowscore-{slug}", url, text, "spam_or_chat_prose", "score_threshold", "score_below_min")
        )
    for slug, url, text in SHORT_PAGES:
        records.append(web(f"short-{slug}", url, text, "very_short", "gopher_quality", "too_few_words"))
    return records


def unsafe_and_foreign() -> list[dict]:
    records = []
    for slug, lang, url, text in NON_ENGLISH:
        records.append(web(f"lang-{slug}", url, text, f"non_english_{lang}", "language", "wrong_language"))
    for slug, url, text in BADWORD_PAGES:
        records.append(web(f"badwords-{slug}", url, text, "bad_words", "c4_badwords", "badwords"))
    for slug, url, text in BLOCKED_PAGES:
        records.append(web(f"blocked-{slug}", url, text, "blocked_url", "url_filter"))
    return records


def candidates() -> list[dict]:
    records = []
    for slug, reason, prompt, solution, tests, entry_point in CODE_CANDIDATES:
        record = {
            "id": f"code-{slug}",
            "kind": "code",
            "language": "python",
            "prompt": prompt,
            "solution": solution,
            "tests": tests,
        }
        if entry_point:
            record["entry_point"] = entry_point
        records.append(_candidate(record, reason))
    for slug, reason, problem, solution, answer in MATH_CANDIDATES:
        records.append(
            _candidate(
                {
                    "id": f"math-{slug}",
                    "kind": "math",
                    "problem": problem,
                    "solution": solution,
                    "answer": answer,
                },
                reason,
            )
        )
    return records


def _candidate(record: dict, reason: str) -> dict:
    record["category"] = f"{record['kind']}_{'verified' if not reason else reason}"
    record["expected"] = "verify" if reason else "kept"
    if reason:
        record["expected_reason"] = reason
    record["expected_fineweb"] = "kept"  # no verify stage: candidates bypass every other stage
    return record


FILES = {
    "articles.jsonl": articles,
    "duplicates.jsonl": duplicates,
    "low_quality.jsonl": low_quality,
    "unsafe_and_foreign.jsonl": unsafe_and_foreign,
    "candidates.jsonl": candidates,
}


def render() -> dict[str, str]:
    """The content of every output file, by file name; ids are unique across files."""
    seen: set[str] = set()
    files = {}
    for name, build in FILES.items():
        records = build()
        for record in records:
            assert record["id"] not in seen, record["id"]
            seen.add(record["id"])
        files[name] = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return files


def main() -> None:
    for name, content in render().items():
        (OUT_DIR / name).write_text(content, encoding="utf-8")
        print(f"{name}: {content.count(chr(10))} records")


if __name__ == "__main__":
    main()
