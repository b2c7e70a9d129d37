import Foundation
import Testing
@testable import PoseEstimation

/// A person's box at 15 fps: `centreX` across, standing 200 px tall, squatting to `dip` of that.
private func box(centreX: Float, height: Float = 200, width: Float = 60) -> BoundingBox {
    BoundingBox(minX: centreX - width / 2, minY: 400 - height, maxX: centreX + width / 2, maxY: 400)
}

/// Feeds `seconds` of frames: the watched person's box each frame (nil: not seen), a search every
/// `searchInterval` frames finding `other` at that time (nil: nobody). Returns the times at which
/// the watch moved; stops at the first with `untilMoved` (the boxes given are then the wrong
/// people's: the pose stage would look at the newly watched person).
@discardableResult
private func run(_ people: inout PeopleInView, from start: Double, seconds: Double, exercising: Bool, untilMoved: Bool = false,
                 watched: (Double) -> BoundingBox?, other: (Double) -> BoundingBox?) -> [Double] {
    var moves: [Double] = []
    var time = start
    while time < start + seconds {
        let search = people.wantsSearch()
        people.watchedSeen(watched(time), at: time)
        if search, people.searched(found: other(time), at: time) {
            moves.append(time)
            if untilMoved { break }
        }
        people.watchedExercises(exercising, at: time)
        time += 1.0 / 15
    }
    return moves
}

/// A squat's box: 200 px tall standing, 140 px at the bottom, 1.5 s a repetition.
private func squatting(centreX: Float) -> (Double) -> BoundingBox? {
    { time in box(centreX: centreX, height: 170 + 30 * Float(cos(time * 2 * .pi / 1.5))) }
}

@Suite struct PeopleInViewTests {
    @Test func aSearchRunsEveryFifthFrameOnlyWhileSomeoneIsWatched() {
        var people = PeopleInView()
        let searchesWithNobody = people.wantsSearch()
        #expect(!searchesWithNobody)
        people.watchedSeen(box(centreX: 200), at: 0)
        var searches: [Int] = []
        for frame in 0..<20 where people.wantsSearch() { searches.append(frame) }
        #expect(searches == [4, 9, 14, 19])
    }

    @Test func aSecondPersonFoundBySearchIsCountedAndForgottenWhenGone() {
        var people = PeopleInView()
        run(&people, from: 0, seconds: 2, exercising: true, watched: { _ in box(centreX: 200) },
            other: { _ in box(centreX: 500) })
        let twoInView = people.count(at: 2) == 2
        #expect(twoInView)
        // Not found by the searches of the next 3 s: forgotten after forgetSeconds.
        run(&people, from: 2, seconds: 3, exercising: true, watched: { _ in box(centreX: 200) }, other: { _ in nil })
        let oneInViewAgain = people.count(at: 5) == 1
        #expect(oneInViewAgain)
    }

    @Test func theWatchedPersonFoundAgainBySearchIsNotASecondPerson() {
        var people = PeopleInView()
        run(&people, from: 0, seconds: 2, exercising: true, watched: { _ in box(centreX: 200) },
            other: { _ in box(centreX: 205) })
        let onlyTheWatchedInView = people.count(at: 2) == 1
        #expect(onlyTheWatchedInView)
    }

    @Test func aPoseOfTheOtherPersonIsNotTakenForTheWatchedOne() {
        var people = PeopleInView()
        run(&people, from: 0, seconds: 1, exercising: true, watched: { _ in box(centreX: 200) },
            other: { _ in box(centreX: 330) })
        let theWatchedPoseIsAccepted = people.isWatched(box(centreX: 210))
        #expect(theWatchedPoseIsAccepted)
        let theOthersPoseIsRefused = !people.isWatched(box(centreX: 325))
        #expect(theOthersPoseIsRefused)
        let aFarPoseIsRefused = !people.isWatched(box(centreX: 600))
        #expect(aFarPoseIsRefused)
    }

    @Test func theWatchNeverMovesWhileTheWatchedPersonKeepsExercising() {
        var people = PeopleInView()
        let moves = run(&people, from: 0, seconds: 30, exercising: true, watched: squatting(centreX: 150),
                        other: squatting(centreX: 450))
        #expect(moves.isEmpty)
        #expect(people.watchIdentifier == 1)
    }

    @Test func theWatchMovesToSomeoneExercisingWhenTheWatchedPersonStandsIdle() {
        var people = PeopleInView()
        // The first person found stands idle (a title card, a partner watching); the other squats.
        let moves = run(&people, from: 0, seconds: 12, exercising: false, untilMoved: true, watched: { _ in box(centreX: 150) },
                        other: squatting(centreX: 450))
        #expect(moves.count == 1)
        #expect(moves.first.map { $0 >= people.graceSeconds } == true)
        let now = people.watched!.box
        #expect(now.minX > 300)
        // The person left behind is one of the others now, and is blacked out of the new crop.
        #expect((0..<PeopleInView.slotCount).contains { people.otherPerson(in: $0).map { $0.box.maxX < 300 } ?? false })
    }

    @Test func someoneStandingStillNeverTakesTheWatch() {
        var people = PeopleInView()
        let moves = run(&people, from: 0, seconds: 20, exercising: false, watched: { _ in box(centreX: 150) },
                        other: { _ in box(centreX: 450) })
        #expect(moves.isEmpty)
    }

    @Test func aMuchLargerPersonFoundSoonAfterTheStartTakesTheWatch() {
        var people = PeopleInView()
        let moves = run(&people, from: 0, seconds: 2, exercising: false, watched: { _ in box(centreX: 150, height: 100, width: 30) },
                        other: { _ in box(centreX: 450) })
        #expect(moves.count == 1)
        // Not after the watch has settled.
        var settled = PeopleInView()
        run(&settled, from: 0, seconds: 4, exercising: true, watched: { _ in box(centreX: 150, height: 100, width: 30) }, other: { _ in nil })
        let late = run(&settled, from: 4, seconds: 3, exercising: true, watched: { _ in box(centreX: 150, height: 100, width: 30) },
                       other: { _ in box(centreX: 450) })
        #expect(late.isEmpty)
    }

    @Test func theMaskOfAnotherPersonNeverCoversTheWatchedPerson() {
        var people = PeopleInView()
        run(&people, from: 0, seconds: 1, exercising: true, watched: { _ in box(centreX: 200) }, other: { _ in box(centreX: 300) })
        let mask = people.maskRectangle(forOther: box(centreX: 300))!
        let keep = people.grown(box(centreX: 200))
        #expect(mask.minX >= keep.maxX)
        #expect(mask.maxX > box(centreX: 300).maxX)
        // Someone standing right behind the watched person is not blacked out at all.
        let nothingIsBlackedOut = people.maskRectangle(forOther: box(centreX: 200, height: 150, width: 40)) == nil
        #expect(nothingIsBlackedOut)
    }

    @Test func theWatchEndsWhenTheWatchedPersonIsGoneForLong() {
        var people = PeopleInView()
        people.watchedSeen(box(centreX: 200), at: 0)
        people.watchedSeen(nil, at: 1.5)
        #expect(people.watched != nil)
        people.watchedSeen(nil, at: 2.5)
        #expect(people.watched == nil)
        people.watchedSeen(box(centreX: 400), at: 2.6)
        #expect(people.watchIdentifier == 2)
    }

    @Test func theNewlyWatchedPersonIsLookedForInACropAroundTheirBox() {
        let policy = CropPolicy()
        let region = policy.region(around: box(centreX: 450), frameWidth: 640, frameHeight: 480)
        #expect(region.side == 300)  // 1.5 × the 200 px body
        #expect(region.minX + region.side / 2 == 450 && region.minY + region.side / 2 == 300)
        // A box as large as the frame gives the whole frame.
        let whole = policy.region(around: BoundingBox(minX: 0, minY: 0, maxX: 600, maxY: 470), frameWidth: 640, frameHeight: 480)
        #expect(whole == CropRegion.wholeFrame(width: 640, height: 480))
    }
}
